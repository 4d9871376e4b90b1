// The CUDA backend: prints the loop IR (the same lowering as the CPU backend) as CUDA C++. Each
// function becomes one kernel that runs the whole function, time loops included, so a scan costs
// one launch however many steps it takes (docs/cuda.md):
//  - uniform code (everything outside element loops) runs in every thread alike;
//  - element loops are spread over all threads of the launch, a barrier after each;
//  - barriers are statements of the loop IR, placed where threads must wait for each other
//    (cuda_barriers.h): the printer only prints them;
//  - nests of serial loops around element loops whose elements own their addresses become one
//    element loop (element_nests.h), so that all threads take whole elements of a tensor;
//  - time loops whose steps are independent lanes are turned inside out first (lanes.h), so each
//    thread runs the whole time loop of its lanes with no barrier per step;
//  - buffers come from an arena the host provides (templates/cuda/scangen_cuda_device.h).
// Outputs: for the JIT, the kernels alone (NVRTC compiles no host code) and a JSON manifest of the
// functions; for offline builds, <stem>.cu (kernels and host glue over the CUDA runtime API) and
// <stem>.cuh (the typed API: device pointers and a stream).
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/backend.h"
#include "codegen/cpp_printer.h"
#include "codegen/imports.h"
#include "support/check.h"

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;

// Prints one function's body for the execution model of scangen_cuda_device.h: uniform code runs
// in every thread, element loops are spread over the threads. The barriers are statements of the
// loop IR, placed by cuda_barriers.h.
class CudaPrinter : public CppPrinter {
 public:
  explicit CudaPrinter(const lir::Function& f) : pointers_(lir::pointer_lets(*f.body)) {
    for (const lir::Param& p : f.params)
      if (p.rank > 0) read_only_.insert(p.name);
  }

 protected:
  // Where the emulation may delay a thread to show a missing barrier: a uniform statement that
  // loads or stores memory the kernel writes. The macro is empty on a GPU.
  void before_statement(const Stmt& s, int indent, std::ostringstream& os) override {
    if (element_depth_ == 0 && (s.kind == StmtKind::Store || loads_written_memory(s)))
      os << std::string(size_t(indent), ' ') << "SCANGEN_CUDA_RACE_POINT();\n";
  }

  std::string special_float(double v, DType d) const override {
    std::string bits = d == DType::F32 ? (std::isnan(v) ? "__int_as_float(0x7fc00000)" : "__int_as_float(0x7f800000)")
                                       : (std::isnan(v) ? "__longlong_as_double(0x7ff8000000000000LL)"
                                                        : "__longlong_as_double(0x7ff0000000000000LL)");
    return std::signbit(v) ? "(-" + bits + ")" : bits;  // NaNs keep their sign, as on the CPU
  }
  // Loads of memory other threads write may not go through the non-coherent read-only cache that
  // __restrict__ allows.
  const char* restrict_qualifier() const override { return ""; }
  // Arguments are never written during a launch (results live in the arena): their loads go
  // through the read-only cache, and the compiler may issue them ahead of the stores around them,
  // which it may not do for plain loads it cannot prove disjoint from those stores (a time loop
  // then waits for each step's loads in turn).
  std::string load(const std::string& pointer, const std::string& index) override {
    if (read_only_.count(lir::pointer_root(pointers_, pointer))) return "sgc::input(" + pointer + " + " + index + ")";
    return CppPrinter::load(pointer, index);
  }

  void print_for(const Stmt& s, int indent, std::ostringstream& os) override {
    std::string pad(size_t(indent), ' ');
    SCANGEN_CHECK(s.loop != lir::LoopKind::Parallel, "a loop of the CPU thread pool in the loop IR of a CUDA kernel");
    if (s.loop == lir::LoopKind::Vector && element_depth_ == 0) {
      // A thread runs few iterations of an element loop: unrolling it would only make the kernel
      // larger and slower to compile.
      os << pad << "#pragma unroll 1\n";
      os << pad << "for (int64_t " << s.var << " = " << expr(s.begin, true) << " + ctx.rank(); " << s.var << " < "
         << expr(s.end, true) << "; " << s.var << " += ctx.width()) {\n";
      ++element_depth_;
      std::string saved = element_var_;
      element_var_ = s.var;
      body(s.body, indent + 2, os);
      element_var_ = saved;
      --element_depth_;
      os << pad << "}\n";
      return;
    }
    os << pad << "for (int64_t " << s.var << " = " << expr(s.begin, true) << "; " << s.var << " < "
       << expr(s.end, true) << "; ++" << s.var << ") {\n";
    if (element_depth_ > 0) ++loops_in_element_;
    body(s.body, indent + 2, os);
    if (element_depth_ > 0) --loops_in_element_;
    os << pad << "}\n";
  }

  void print_barrier(const Stmt& s, int indent, std::ostringstream& os) override {
    SCANGEN_CHECK(element_depth_ == 0, "a barrier inside an element loop");
    std::string pad(size_t(indent), ' ');
    os << pad << "ctx.barrier();\n";
    if (s.failure_check) os << pad << "if (ctx.failed()) return;\n";
  }

  void print_check(const Stmt& s, int indent, std::ostringstream& os) override {
    std::string pad(size_t(indent), ' ');
    if (element_depth_ > 0) {
      // `continue` leaves the failing element for the loop's barrier; inside a loop of its own it
      // would go on with that loop instead (the lowering puts checks in element loops directly).
      SCANGEN_CHECK(loops_in_element_ == 0, "a check inside a loop within an element loop");
      os << pad << "if (!" << paren(s.cond) << ") {\n"
         << pad << "  ctx.fail(" << element_var_ << ", " << failure_arguments(s) << ");\n"
         << pad << "  continue;\n"
         << pad << "}\n";
      return;
    }
    os << pad << "if (!" << paren(s.cond) << ") {\n"
       << pad << "  ctx.fail_uniform(" << failure_arguments(s) << ");\n"
       << pad << "  return;\n"
       << pad << "}\n";
  }

  void print_alloc(const Stmt& s, int indent, std::ostringstream& os) override {
    SCANGEN_CHECK(element_depth_ == 0, "an allocation inside an element loop");
    std::string pad(size_t(indent), ' ');
    os << pad << ctype(s.vtype.elem) << (s.mutable_pointer ? "* " : "* const ") << s.var << " = ";
    if (s.cond)
      os << expr(s.cond, true) << " ? " << s.storage << ".lend(ctx, " << expr(s.args.at(0), true) << ", "
         << expr(s.args.at(1), true) << ", " << expr(s.value, true) << ") : ";
    os << s.storage << ".ensure(ctx, " << expr(s.value, true) << ");\n";
    print_arena_full(s, indent, os);
  }

  void print_grow(const Stmt& s, int indent, std::ostringstream& os) override {
    SCANGEN_CHECK(element_depth_ == 0, "a buffer grown inside an element loop");
    std::string pad(size_t(indent), ' ');
    os << pad << s.var << " = " << s.storage << ".grow(ctx, " << expr(s.value, true) << ", " << expr(s.index, true)
       << ");\n";
    print_arena_full(s, indent, os);
  }

  // A full arena stops the launch, which the host runs again with a larger one; the allocation's
  // message is what it reports when it cannot have that much device memory.
  void print_arena_full(const Stmt& s, int indent, std::ostringstream& os) {
    std::string pad(size_t(indent), ' ');
    os << pad << "if (!" << s.var << ") {\n"
       << pad << "  ctx.arena_full(" << failure_arguments(s) << ");\n"
       << pad << "  return;\n"
       << pad << "}\n";
  }

  void print_call(const Stmt& s, int indent, std::ostringstream& os) override {
    SCANGEN_CHECK(element_depth_ == 0, "a helper called inside an element loop");
    std::string pad(size_t(indent), ' ');
    os << pad << "sgc::" << s.callee << "(ctx";
    for (const ExprRef& a : s.args) os << ", " << expr(a, true);
    os << ");\n";
  }

  void print_result(const Stmt& s, int indent, std::ostringstream& os) override {
    std::string pad(size_t(indent), ' ');
    os << pad << "ctx.result(" << s.result_index << ", " << (s.storage.empty() ? top(s.value) : expr(s.value));
    for (const ExprRef& d : s.args) os << ", " << expr(d, true);
    os << ");\n";
  }

 private:
  // Whether the statement's own expressions load memory the function writes (not an argument).
  bool loads_written_memory(const Stmt& s) const {
    std::vector<std::pair<std::string, ExprRef>> loaded;
    for (const ExprRef* e : {&s.value, &s.index, &s.begin, &s.end, &s.cond}) lir::collect_loads(*e, loaded);
    for (const ExprRef& a : s.args) lir::collect_loads(a, loaded);
    for (const lir::MessagePart& m : s.message) lir::collect_loads(m.value, loaded);
    for (const auto& load : loaded)
      if (!read_only_.count(lir::pointer_root(pointers_, load.first))) return true;
    return false;
  }

  std::set<std::string> read_only_;
  std::map<std::string, const Stmt*> pointers_;
  int element_depth_ = 0;
  int loops_in_element_ = 0;  // serial loops open inside the element loop
  std::string element_var_;
};

// ---- the backend

const ApiTypes kCudaTypes = {
    [](DType d, bool is_const) {
      return std::string("scangen::cuda::DeviceTensorRef<") + (is_const ? "const " : "") + ctype(d) + ">";
    },
    [](DType d) { return std::string("scangen::cuda::DeviceTensor<") + ctype(d) + ">"; }};

std::string kernel_name(size_t f) { return "scangen_kernel_" + std::to_string(f); }


// The JIT compiles one function at a time (-DSCANGEN_KERNEL=<index>, from the manifest): NVRTC's
// time grows with the code, and a call needs one kernel. Without the macro, all of them.
std::string select_kernel(size_t f) {
  return "#if !defined(SCANGEN_KERNEL) || SCANGEN_KERNEL == " + std::to_string(f) + "\n";
}

class CudaBackend {
 public:
  std::vector<EmittedFile> emit(const lir::Module& module, const EmitOptions& options) const {
    std::string kernels = print_kernels(module, options);
    if (options.single_translation_unit && options.cuda_emulation)
      return {{options.stem + ".emulated.cpp", generated_banner(module) + std::string(embedded::file("common/scangen_abi.h")) +
                                                   "\n" + std::string(embedded::file("cuda/scangen_cuda_emulation.h")) +
                                                   "\n" + kernels},
              {options.stem + ".cuda.json", manifest(module)}};
    if (options.single_translation_unit)
      return {{options.stem + ".cu", generated_banner(module) + kernels},
              {options.stem + ".cuda.json", manifest(module)}};
    std::string header = print_header(module, options);
    std::string source = generated_banner(module) + "#include \"" + options.stem + ".cuh\"\n\n#include <algorithm>\n#include <atomic>\n#include <cstring>\n\n" + kernels +
                         print_host(module, options);
    return {{options.stem + ".cuh", header}, {options.stem + ".cu", source}};
  }

 private:
  // The imported headers, whose functions the kernels call (each __host__ __device__: the driver
  // checked, driver::Compilation::check_cuda_imports). For the JIT (NVRTC, the emulation) by absolute path
  // after the hashes of their files, which the caches key on; for a build system by the spelling
  // of the import statement (docs/cli.md). The emulation, host C++, shows the headers what NVRTC
  // shows them, so that they take the GPU's side of `#ifdef __CUDACC__` (docs/language.md).
  static void print_imports(const lir::Module& module, const EmitOptions& options, std::ostringstream& os) {
    if (module.imports.empty()) return;
    const bool jit = options.single_translation_unit;
    const bool emulation = jit && options.cuda_emulation;
    os << "// Imported C++ headers (namespace scangen_export).\n";
    if (emulation) os << "#define __CUDACC__ 1\n#define __CUDACC_RTC__ 1\n";
    for (const lir::Include& import : module.imports)
      os << (jit ? jit_include_lines(import.header, import.dependencies) : "#include \"" + import.spelling + "\"\n");
    if (emulation) os << "#undef __CUDACC_RTC__\n#undef __CUDACC__\n";
    os << "\n";
  }

  // For the JIT (single_translation_unit): kernels with C names for the runtime to look up; else
  // local to the translation unit, so that several generated .cu files link into one program.
  static std::string print_kernels(const lir::Module& module, const EmitOptions& options) {
    const bool jit = options.single_translation_unit;
    std::ostringstream os;
    os << "// The kernels: one per function, each running the whole function (docs/cuda.md).\n";
    os << embedded::file("cuda/scangen_cuda_abi.h") << "\n";
    os << embedded::file("common/scangen_scalar.h") << "\n";
    os << embedded::file("cuda/scangen_cuda_device.h") << "\n";
    // The associative scans' helpers follow the device header in kernels that call them (only
    // those: they would lengthen every other kernel's NVRTC compile).
    const size_t scan_helpers_at = os.str().size();
    print_imports(module, options, os);
    if (!jit) os << "namespace {\n\n";
    os << "namespace scangen_kernels {\n\nnamespace sg = scangen::scalar_v1;\nnamespace sgc = scangen_cuda_v1;\n\n";
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      if (jit) os << select_kernel(f);
      os << "// fn " << lf.name << lf.signature.text << "\n";
      os << "// Strategy: whole function in one kernel";
      if (lf.kernel.lanes > 0) os << "; independent lanes for " << lf.kernel.lanes << " time loop(s)";
      if (lf.kernel.flattened > 0) os << "; " << lf.kernel.flattened << " element nest(s) flattened";
      os << ".\n";
      const std::set<std::string>& block_shared = lf.kernel.block_shared;
      if (!block_shared.empty())
        os << "// Buffers the steps write: in the block's shared memory when the launch is one block.\n";
      os << "__device__ void " << lf.symbol << "(sgc::Context& ctx";
      for (const std::string& p : impl_parameters(lf)) os << ", " << p;
      for (const std::string& p : impl_out_parameters(lf)) os << ", " << p;
      os << ") {\n";
      for (const lir::StorageDecl& s : lf.storages)
        os << "  sgc::Storage<" << ctype(s.elem) << "> " << s.name
           << (block_shared.count(s.name) ? "{sgc::Place::BlockShared}" : "") << ";\n";
      CudaPrinter p(lf);
      p.stmt(*lf.body, 2, os);
      os << "  ctx.finish();\n}\n" << (jit ? "#endif\n" : "") << "\n";
    }
    os << "}  // namespace scangen_kernels\n\n";
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      if (jit) os << select_kernel(f);
      os << (jit ? "extern \"C\" " : "") << "__global__ void "
         << (lf.kernel.full_occupancy ? "__launch_bounds__(SCANGEN_CUDA_BLOCK_THREADS, SCANGEN_CUDA_LANE_BLOCKS) " : "") << kernel_name(f)
         << "(scangen_cuda_launch* launch, scangen_cuda_tensor* tensors) {\n"
         << "  scangen_cuda_v1::Context ctx(launch, tensors);\n"
         << "  scangen_kernels::" << lf.symbol << "(ctx";
      for (size_t i = 0; i < lf.params.size(); ++i) {
        const lir::Param& p = lf.params[i];
        std::string t = "tensors[" + std::to_string(i) + "]";
        if (p.rank == 0) {
          os << ", scangen_cuda_v1::scalar_arg<" << ctype(p.dtype) << ">(" << t << ")";
          continue;
        }
        os << ", scangen_cuda_v1::tensor_arg<" << ctype(p.dtype) << ">(" << t << ")";
        for (int d = 0; d < p.rank; ++d) os << ", " << t << ".shape[" << d << "]";
      }
      print_kernel_out_arguments(lf, os);
      os << ");\n}\n" << (jit ? "#endif\n" : "") << "\n";
    }
    if (!jit) os << "}  // namespace\n\n";
    std::string text = os.str();
    if (text.find("sgc::scan_", scan_helpers_at) != std::string::npos)
      text.insert(scan_helpers_at, std::string(embedded::file("cuda/scangen_cuda_scan.h")) + "\n");
    return text;
  }

  // The arguments of the form with results in the caller's memory: whether the host asked for it
  // (in the record of the first tensor result) and each result record's memory and shape.
  static void print_kernel_out_arguments(const lir::Function& lf, std::ostringstream& os) {
    if (lf.into.empty()) return;
    const size_t results = lf.params.size();
    std::string into = "false";
    for (size_t i = 0; i < lf.outs.size() && into == "false"; ++i)
      if (!lf.outs[i].name.empty())
        into = "scangen_cuda_v1::into_caller_memory(tensors[" + std::to_string(results + i) + "])";
    os << ", " << into;
    for (size_t i = 0; i < lf.outs.size(); ++i) {
      const lir::Param& p = lf.outs[i];
      if (p.name.empty()) continue;
      const std::string t = "tensors[" + std::to_string(results + i) + "]";
      os << ", scangen_cuda_v1::caller_memory<" << ctype(p.dtype) << ">(" << t << ")";
      for (int d = 0; d < p.rank; ++d) os << ", " << t << ".shape[" << d << "]";
    }
  }

  static std::string manifest(const lir::Module& module) {
    nlohmann::ordered_json m;
    m["format"] = "scangen-cuda-manifest";
    m["version"] = 2;
    m["source"] = module.source_path;
    nlohmann::ordered_json fns = nlohmann::ordered_json::array();
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Signature& fn = module.functions[f].signature;
      nlohmann::ordered_json j;
      j["name"] = module.functions[f].name;
      j["signature"] = fn.text;
      j["kernel"] = kernel_name(f);
      j["kernel_index"] = f;
      for (const lir::Declared& a : fn.args)
        j["args"].push_back({{"dtype", std::string(dtype_name(a.dtype))}, {"rank", a.rank}});
      if (fn.args.empty()) j["args"] = nlohmann::ordered_json::array();
      for (const lir::Declared& r : fn.results)
        j["results"].push_back({{"dtype", std::string(dtype_name(r.dtype))}, {"rank", r.rank}});
      j["width"] = nlohmann::ordered_json::array();
      for (const lir::WidthTerm& t : module.functions[f].kernel.width) {
        nlohmann::ordered_json dims = nlohmann::ordered_json::array();
        for (auto [arg, axis] : t.dims) dims.push_back({arg, axis});
        j["width"].push_back({{"factor", t.factor}, {"dims", dims}});
      }
      fns.push_back(j);
    }
    m["functions"] = fns;
    return m.dump(2) + "\n";
  }

  std::string print_header(const lir::Module& module, const EmitOptions& o) const {
    std::ostringstream os;
    os << generated_banner(module);
    const std::string guard = include_guard(o.stem, "cuh");
    os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
    os << embedded::file("cuda/scangen_cuda_api.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\nnamespace cuda {\n\n";
    os << "// Every function runs on `scangen_stream` and returns when its results are ready; arguments and tensor\n"
          "// results are in device memory of the current device.\n\n";
    std::vector<Api> apis = apis_of(module, kCudaTypes);
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      const Api& a = apis[f];
      os << "// fn " << lf.name << lf.signature.text << "\n";
      if (!a.result_struct.empty()) os << a.result_struct;
      os << a.result_type << " " << a.name << "(" << a.params << (a.params.empty() ? "" : ", ")
         << "cudaStream_t scangen_stream = 0);\n";
      if (!a.out_params.empty())
        os << "// The same, writing the results into the caller's device tensors.\n"
           << "void " << a.name << "(" << a.params << (a.params.empty() ? "" : ", ") << a.out_params
           << ", cudaStream_t scangen_stream = 0);\n";
      os << "\n";
    }
    os << "}  // namespace cuda\n}  // namespace " << o.cpp_namespace << "\n\n#endif  // " << guard << "\n";
    return os.str();
  }

  // One form of a function's host glue: the one that returns its results in device memory of
  // their own or (`into`) the one that writes them into the caller's device tensors.
  static void print_host_form(const lir::Function& lf, const Api& a, size_t f, bool into, std::ostringstream& os) {
    const lir::Signature& fn = lf.signature;
    os << (into ? std::string("void") : a.result_type) << " " << a.name << "(" << a.params
       << (a.params.empty() ? "" : ", ") << (into ? a.out_params + ", " : "") << "cudaStream_t scangen_stream) {\n";
    os << rank_checks(lf, a, "scangen_cuda_host_v1::fail");
    if (into) os << out_checks(lf, a, "scangen_cuda_host_v1::fail", "scangen_cuda_host_v1::check_disjoint");
    os << "  const std::vector<scangen_cuda_tensor> scangen_args = {";
    for (size_t i = 0; i < fn.args.size(); ++i) {
      const lir::Declared& arg = fn.args[i];
      os << (i ? ",\n      " : "") << "scangen_cuda_host_v1::" << (arg.rank == 0 ? "scalar_arg(" : "tensor_arg(")
         << a.arg_names[i] << ", " << abi_dtype(arg.dtype) << ")";
    }
    os << "};\n";
    if (into) {
      os << "  const std::vector<scangen_cuda_tensor> scangen_outs = {";
      for (size_t i = 0; i < fn.results.size(); ++i)
        os << (i ? ",\n      " : "") << "scangen_cuda_host_v1::out_record(" << a.out_names[i] << ", "
           << abi_dtype(fn.results[i].dtype) << ")";
      os << "};\n";
    }
    // The threads worth launching: the largest element loop the argument shapes tell.
    os << "  long long scangen_width = 1;\n";
    for (const lir::WidthTerm& t : lf.kernel.width) {
      os << "  scangen_width = std::max(scangen_width, scangen_cuda_host_v1::dims_product({" << t.factor << "LL";
      for (auto [arg, axis] : t.dims) os << ", " << a.arg_names[size_t(arg)] << ".dim(" << axis << ")";
      os << "}));\n";
    }
    os << "  // The arena to start with: the most a call used so far.\n";
    os << "  static std::atomic<unsigned long long> scangen_arena_hint{0};\n";
    os << "  unsigned long long scangen_hint = scangen_arena_hint.load();\n";
    os << "  auto [scangen_arena, scangen_results] = scangen_cuda_host_v1::run(reinterpret_cast<const void*>(&"
       << kernel_name(f) << "), scangen_stream, scangen_args, " << fn.results.size() << ", scangen_width, scangen_hint"
       << (into ? ", &scangen_outs" : "") << ");\n";
    os << "  if (scangen_hint > scangen_arena_hint.load()) scangen_arena_hint.store(scangen_hint);\n";
    if (into) {
      // The tensors are in the caller's memory already; scalars come back in their records.
      for (size_t i = 0; i < fn.results.size(); ++i)
        if (fn.results[i].rank == 0)
          os << "  scangen_cuda_host_v1::store_scalar(" << a.out_names[i] << ", scangen_results[" << i
             << "], scangen_stream);\n";
      os << "  (void)scangen_arena;\n  (void)scangen_results;\n}\n\n";
      return;
    }
    auto result = [&](size_t i) {
      const lir::Declared& r = fn.results[i];
      std::string at = "scangen_results[" + std::to_string(i) + "]";
      return r.rank == 0 ? std::string("scangen_cuda_host_v1::scalar_result<") + ctype(r.dtype) + ">(" + at + ")"
                                : std::string("scangen_cuda_host_v1::tensor_result<") + ctype(r.dtype) + ">(scangen_arena, " + at + ")";
    };
    if (fn.results.size() == 1) {
      os << "  return " << result(0) << ";\n";
    } else {
      os << "  " << a.result_type << " " << a.local << ";\n";
      for (size_t i = 0; i < fn.results.size(); ++i)
        os << "  " << a.local << "." << a.result_fields[i] << " = " << result(i) << ";\n";
      os << "  return " << a.local << ";\n";
    }
    os << "}\n\n";
  }

  static std::string print_host(const lir::Module& module, const EmitOptions& o) {
    std::ostringstream os;
    os << "// Host glue: launching the kernels over the CUDA runtime API.\n";
    os << embedded::file("cuda/scangen_cuda_launch.h") << "\n";
    os << embedded::file("common/scangen_abi.h") << "\n";
    os << embedded::file("cuda/scangen_cuda_host.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\nnamespace cuda {\n\n";
    std::vector<Api> apis = apis_of(module, kCudaTypes);
    for (size_t f = 0; f < module.functions.size(); ++f) {
      print_host_form(module.functions[f], apis[f], f, false, os);
      if (!apis[f].out_params.empty()) print_host_form(module.functions[f], apis[f], f, true, os);
    }
    os << "}  // namespace cuda\n}  // namespace " << o.cpp_namespace << "\n";
    return os.str();
  }
};

}  // namespace

std::vector<EmittedFile> print_cuda(const lir::Module& module, const EmitOptions& options) {
  return CudaBackend().emit(module, options);
}

}  // namespace scangen::codegen
