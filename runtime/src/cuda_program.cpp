#include "scangen/runtime/cuda_program.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "scangen/runtime/errors.h"
#include "scangen_abi.h"
#include "scangen_cuda_abi.h"
#include "scangen_cuda_launch.h"

namespace scangen {
namespace {

using Json = nlohmann::json;

DType dtype_from(const Json& j) {
  std::string name = j.get<std::string>();
  for (DType d : {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64})
    if (dtype_name(d) == name) return d;
  throw InternalError("CUDA manifest: unknown dtype '" + name + "'");
}

std::string describe(const CudaFunctionInfo& fn) { return fn.name + fn.signature; }

// The Ops of scangen_cuda_launch.h over the driver API (cuda.h).
class DriverOps {
 public:
  DriverOps(std::shared_ptr<CudaDevice> device, CudaFunction function)
      : device_(std::move(device)), function_(std::move(function)) {}
  static constexpr unsigned kBlockLimit = SCANGEN_CUDA_BLOCK_THREADS;

  unsigned long long allocate(size_t bytes) {
    CudaBuffer b = device_->allocate(bytes);
    unsigned long long address = b.device_pointer();
    buffers_.emplace(address, std::move(b));
    return address;
  }
  void release(unsigned long long address) { buffers_.erase(address); }
  void upload(unsigned long long to, const void* from, size_t bytes) {
    auto& [start, b] = containing(to);
    b.upload(from, bytes, size_t(to - start));
  }
  void download(void* to, unsigned long long from, size_t bytes) {
    auto& [start, b] = containing(from);
    b.download(to, bytes, size_t(from - start));
  }
  unsigned max_blocks(unsigned block) {
    if (!device_->info().cooperative_launch) return 1;
    return function_.max_cooperative_blocks(block);
  }
  void launch(const scangen_cuda_launch_v1::LaunchShape& shape, unsigned long long record,
              unsigned long long tensors) {
    CudaLaunchConfig config;
    config.grid.x = shape.grid;
    config.block.x = shape.block;
    config.cooperative = shape.cooperative;
    config.shared_bytes = shape.shared_bytes;
    function_(config, record, tensors);
    device_->synchronize();
  }

 private:
  std::pair<const unsigned long long, CudaBuffer>& containing(unsigned long long address) {
    auto it = buffers_.upper_bound(address);
    if (it == buffers_.begin()) throw InternalError("CUDA launch: an address outside device buffers");
    --it;
    if (address - it->first >= std::max<size_t>(it->second.size(), 1))
      throw InternalError("CUDA launch: an address outside device buffers");
    return *it;
  }
  std::shared_ptr<CudaDevice> device_;
  CudaFunction function_;
  std::map<unsigned long long, CudaBuffer> buffers_;
};

}  // namespace

std::vector<CudaFunctionInfo> parse_cuda_manifest(const std::string& text) {
  try {
    Json m = Json::parse(text);
    if (m.at("format") != "scangen-cuda-manifest" || m.at("version") != 2)
      throw InternalError("CUDA manifest: not a scangen CUDA manifest of version 2");
    std::vector<CudaFunctionInfo> out;
    for (const Json& f : m.at("functions")) {
      CudaFunctionInfo fn;
      fn.name = f.at("name").get<std::string>();
      fn.signature = f.at("signature").get<std::string>();
      fn.kernel = f.at("kernel").get<std::string>();
      fn.kernel_index = f.at("kernel_index").get<int>();
      for (const Json& a : f.at("args")) {
        fn.arg_dtypes.push_back(dtype_from(a.at("dtype")));
        fn.arg_ranks.push_back(a.at("rank").get<int>());
      }
      for (const Json& r : f.at("results")) {
        fn.result_dtypes.push_back(dtype_from(r.at("dtype")));
        fn.result_ranks.push_back(r.at("rank").get<int>());
      }
      for (const Json& w : f.at("width")) {
        CudaWidthTerm t;
        t.factor = w.at("factor").get<int64_t>();
        for (const Json& d : w.at("dims")) {
          int arg = d.at(0).get<int>(), axis = d.at(1).get<int>();
          if (arg < 0 || size_t(arg) >= fn.arg_ranks.size() || axis < 0 || axis >= fn.arg_ranks[size_t(arg)])
            throw InternalError("CUDA manifest: a width names no argument dimension");
          t.dims.push_back({arg, axis});
        }
        fn.width.push_back(t);
      }
      out.push_back(std::move(fn));
    }
    return out;
  } catch (const Json::exception& e) {
    throw InternalError(std::string("CUDA manifest: ") + e.what());
  }
}

long long cuda_parallel_width(const CudaFunctionInfo& fn, const std::vector<Shape>& shapes) {
  const long long cap = 1ll << 62;
  long long width = 1;
  for (const CudaWidthTerm& t : fn.width) {
    long long n = t.factor;
    for (auto [arg, axis] : t.dims) {
      long long d = shapes.at(size_t(arg)).at(size_t(axis));
      n = d > 0 && n > cap / d ? cap : n * d;
    }
    width = std::max(width, n);
  }
  return width;
}

CudaCompileOptions kernel_compile_options(const CudaFunctionInfo& fn, int arch) {
  CudaCompileOptions options;
  options.arch = arch;
  options.options.push_back("-DSCANGEN_KERNEL=" + std::to_string(fn.kernel_index));
  options.program_name = fn.name + ".cu";
  return options;
}

CudaCompileOptions kernel_compile_options(const CudaFunctionInfo& fn, const CudaDeviceInfo& device) {
  CudaCompileOptions options = kernel_compile_options(fn, device.arch());
  options.driver_version = device.driver_version;  // the NVRTC chosen must suit it
  return options;
}

CudaProgram::CudaProgram(std::shared_ptr<CudaDevice> device, std::string source, const std::string& manifest,
                         CudaCompiler compiler)
    : device_(std::move(device)),
      source_(std::move(source)),
      compiler_(std::move(compiler)),
      functions_(parse_cuda_manifest(manifest)) {
  // The kernels' spin loops (the failure lock, the grid barrier) need Volta's independent thread
  // scheduling; the device header refuses to compile for older architectures.
  const CudaDeviceInfo& info = device_->info();
  if (info.major < 7)
    throw RuntimeError("scangen's CUDA kernels need a device of compute capability 7.0 or newer; CUDA device " +
                       std::to_string(info.ordinal) + " (" + info.name + ") has " + std::to_string(info.major) + "." +
                       std::to_string(info.minor));
  loaded_.resize(functions_.size());
  arena_hints_.assign(functions_.size(), 0);
}

CudaProgram::Loaded& CudaProgram::loaded(size_t index) {
  std::optional<Loaded>& slot = loaded_.at(index);
  if (!slot) {
    Loaded l;
    l.binary = compiler_.compile(source_, kernel_compile_options(functions_[index], device_->info()));
    l.module = device_->load_module(l.binary);
    slot = std::move(l);
  }
  return *slot;
}

namespace {

const CudaFunctionInfo& find_function(const std::vector<CudaFunctionInfo>& functions, std::string_view name,
                                      size_t& index) {
  std::string available;
  index = functions.size();
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) index = i;
    available += (available.empty() ? "" : ", ") + functions[i].name;
  }
  if (index == functions.size())
    throw RuntimeError("no function '" + std::string(name) + "' in the module (it has: " +
                       (available.empty() ? "no functions" : available) + ")");
  return functions[index];
}

// Checks and uploads the arguments, runs the kernel, downloads the results: for any Ops. With
// `outs`, the results go there (and none is returned): the kernel gets device buffers of their
// shapes in its result records (scangen_cuda_abi.h), whose contents are downloaded into them.
template <class Ops>
std::vector<HostTensor> call_kernel(Ops& ops, const CudaFunctionInfo& fn, const std::vector<HostTensor>& args,
                                    unsigned long long& arena_hint, int& launches,
                                    std::vector<HostTensor>* outs = nullptr) {
  if (args.size() != fn.arg_dtypes.size())
    throw RuntimeError("function '" + fn.name + "' takes " + std::to_string(fn.arg_dtypes.size()) + " argument" +
                       (fn.arg_dtypes.size() == 1 ? "" : "s") + ", got " + std::to_string(args.size()) + ": " +
                       describe(fn));
  struct Uploaded {
    Ops& ops;
    std::vector<unsigned long long> addresses;
    ~Uploaded() {
      for (unsigned long long a : addresses) ops.release(a);
    }
  } uploaded{ops, {}};
  std::vector<scangen_cuda_tensor> structs(args.size());
  std::vector<Shape> shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    const HostTensor& arg = args[i];
    std::string which = "argument " + std::to_string(i + 1) + " of '" + fn.name + "'";
    if (!arg.valid()) throw RuntimeError(which + " is an empty tensor");
    if (arg.dtype() != fn.arg_dtypes[i])
      throw RuntimeError(which + " must be " + std::string(dtype_name(fn.arg_dtypes[i])) + ", got " +
                         std::string(dtype_name(arg.dtype())) + ": " + describe(fn));
    if (arg.rank() != fn.arg_ranks[i])
      throw RuntimeError(which + " must have rank " + std::to_string(fn.arg_ranks[i]) + ", got rank " +
                         std::to_string(arg.rank()) + " (shape " + shape_to_string(arg.shape()) + "): " +
                         describe(fn));
    scangen_cuda_tensor& t = structs[i];
    t.rank = arg.rank();
    t.dtype = int(arg.dtype());
    for (int d = 0; d < arg.rank(); ++d) t.shape[d] = arg.dim(d);
    if (arg.rank() == 0) {
      std::memcpy(&t.scalar, arg.raw_data(), dtype_size(arg.dtype()));
    } else {
      uploaded.addresses.push_back(ops.allocate(arg.nbytes()));
      if (arg.nbytes() > 0) ops.upload(uploaded.addresses.back(), arg.raw_data(), arg.nbytes());
      t.data = uploaded.addresses.back();
    }
    shapes.push_back(arg.shape());
  }
  std::vector<scangen_cuda_tensor> out_records;
  if (outs) {
    if (outs->size() != fn.result_dtypes.size())
      throw RuntimeError("function '" + fn.name + "' has " + std::to_string(fn.result_dtypes.size()) +
                         " results, got " + std::to_string(outs->size()) + " tensors for them: " + describe(fn));
    for (const HostTensor& o : *outs) {
      scangen_cuda_tensor r{};
      r.scalar = 1;
      r.rank = o.rank();
      r.dtype = int(o.dtype());
      for (int d = 0; d < o.rank(); ++d) r.shape[d] = o.dim(d);
      if (o.rank() > 0) {
        uploaded.addresses.push_back(ops.allocate(o.nbytes()));
        r.data = uploaded.addresses.back();
      }
      out_records.push_back(r);
    }
  }
  scangen_cuda_launch_v1::Outcome out =
      scangen_cuda_launch_v1::run(ops, structs, int(fn.result_dtypes.size()), cuda_parallel_width(fn, shapes),
                                  arena_hint, Ops::kBlockLimit, outs ? &out_records : nullptr);
  launches = out.launches;
  if (!out.ok) throw RuntimeError(out.message, out.line, out.column);
  struct Arena {
    Ops& ops;
    unsigned long long address;
    ~Arena() { ops.release(address); }
  } arena{ops, out.arena};
  std::vector<HostTensor> results;
  for (size_t i = 0; i < out.results.size(); ++i) {
    const scangen_cuda_tensor& r = out.results[i];
    if (r.rank != fn.result_ranks[i])
      throw InternalError("CUDA kernel: result " + std::to_string(i) + " has the wrong rank");
    Shape shape(r.shape, r.shape + r.rank);
    if (outs) {
      // In the caller's buffer (its record unchanged), or, without that form, in the arena.
      HostTensor& o = (*outs)[i];
      if (shape != o.shape())
        throw RuntimeError("result " + std::to_string(i) + " of '" + fn.name + "' has shape " +
                           shape_to_string(shape) + ", the tensor given for it has shape " + shape_to_string(o.shape()));
      if (r.rank == 0) std::memcpy(o.raw_data(), &r.scalar, dtype_size(o.dtype()));
      else if (o.nbytes() > 0) ops.download(o.raw_data(), r.data, o.nbytes());
      continue;
    }
    HostTensor t(fn.result_dtypes[i], shape);
    if (r.rank == 0) {
      std::memcpy(t.raw_data(), &r.scalar, dtype_size(t.dtype()));
    } else if (t.nbytes() > 0) {
      if (r.data < out.arena || r.data - out.arena + t.nbytes() > arena_hint)
        throw InternalError("CUDA kernel: result " + std::to_string(i) + " lies outside the arena");
      ops.download(t.raw_data(), r.data, t.nbytes());
    }
    results.push_back(std::move(t));
  }
  return results;
}

}  // namespace

const CudaBinary& CudaProgram::load(std::string_view name) {
  size_t index = 0;
  find_function(functions_, name, index);
  return loaded(index).binary;
}

unsigned long long CudaProgram::arena_bytes(std::string_view name) const {
  size_t index = 0;
  find_function(functions_, name, index);
  return arena_hints_[index];
}

std::vector<HostTensor> CudaProgram::call(std::string_view name, const std::vector<HostTensor>& args) {
  size_t index = 0;
  const CudaFunctionInfo& fn = find_function(functions_, name, index);
  DriverOps ops(device_, loaded(index).module->function(fn.kernel));
  return call_kernel(ops, fn, args, arena_hints_[index], last_launches_);
}

void CudaProgram::call_into(std::string_view name, const std::vector<HostTensor>& args,
                            std::vector<HostTensor>& outs) {
  size_t index = 0;
  const CudaFunctionInfo& fn = find_function(functions_, name, index);
  DriverOps ops(device_, loaded(index).module->function(fn.kernel));
  call_kernel(ops, fn, args, arena_hints_[index], last_launches_, &outs);
}

// ---- the emulation

namespace {

using EmulatedKernel = void (*)(scangen_cuda_launch*, scangen_cuda_tensor*);
using EmulationLauncher = void (*)(EmulatedKernel, unsigned grid, unsigned block, unsigned shared_bytes,
                                   scangen_cuda_launch*, scangen_cuda_tensor*);

class EmulationOps {
 public:
  EmulationOps(EmulationLauncher launcher, EmulatedKernel kernel) : launcher_(launcher), kernel_(kernel) {}
  ~EmulationOps() {
    for (void* p : owned_) std::free(p);
  }
  unsigned long long allocate(size_t bytes) {
    const size_t size = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, size);
    if (!p) throw RuntimeError("out of memory (" + std::to_string(bytes) + " bytes for the CUDA emulation)");
    // Device memory is not cleared: all-ones bytes (NaN, -1) make a read before a write show.
    std::memset(p, 0xFF, size);
    owned_.push_back(p);
    return reinterpret_cast<unsigned long long>(p);
  }
  void release(unsigned long long address) {
    void* p = reinterpret_cast<void*>(address);
    for (void*& q : owned_)
      if (q == p) {
        std::free(q);
        q = owned_.back();
        owned_.pop_back();
        return;
      }
  }
  void upload(unsigned long long to, const void* from, size_t bytes) {
    std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  }
  void download(void* to, unsigned long long from, size_t bytes) {
    std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  }
  unsigned max_blocks(unsigned) { return kEmulatedGrid; }
  void launch(const scangen_cuda_launch_v1::LaunchShape& shape, unsigned long long record, unsigned long long tensors) {
    launcher_(kernel_, shape.grid, shape.block, shape.shared_bytes, reinterpret_cast<scangen_cuda_launch*>(record),
              reinterpret_cast<scangen_cuda_tensor*>(tensors));
  }
  // A small grid: blocks of 3 threads (an odd size exercises the loops' striding), and 2 blocks
  // once the width exceeds one block (the grid barrier); a width of at most 3 runs in one block,
  // with buffers in its shared memory.
  static constexpr unsigned kEmulatedGrid = 2;
  static constexpr unsigned kBlockLimit = 3;

 private:
  EmulationLauncher launcher_;
  EmulatedKernel kernel_;
  std::vector<void*> owned_;
};

}  // namespace

CudaEmulation::CudaEmulation(const std::string& source, const std::string& manifest, CpuJit& jit)
    : functions_(parse_cuda_manifest(manifest)), module_(jit.compile_and_load(source)) {
  launcher_ = module_->symbol("scangen_emulation_launch");
  if (!launcher_) throw InternalError("CUDA emulation: no launcher in the compiled kernels");
  arena_hints_.assign(functions_.size(), 0);
}

CudaEmulation::~CudaEmulation() = default;

std::vector<HostTensor> CudaEmulation::call(std::string_view name, const std::vector<HostTensor>& args) {
  size_t index = 0;
  const CudaFunctionInfo& fn = find_function(functions_, name, index);
  void* kernel = module_->symbol(fn.kernel.c_str());
  if (!kernel) throw InternalError("CUDA emulation: no kernel " + fn.kernel);
  EmulationOps ops(reinterpret_cast<EmulationLauncher>(launcher_), reinterpret_cast<EmulatedKernel>(kernel));
  return call_kernel(ops, fn, args, arena_hints_[index], last_launches_);
}

void CudaEmulation::call_into(std::string_view name, const std::vector<HostTensor>& args,
                              std::vector<HostTensor>& outs) {
  size_t index = 0;
  const CudaFunctionInfo& fn = find_function(functions_, name, index);
  void* kernel = module_->symbol(fn.kernel.c_str());
  if (!kernel) throw InternalError("CUDA emulation: no kernel " + fn.kernel);
  EmulationOps ops(reinterpret_cast<EmulationLauncher>(launcher_), reinterpret_cast<EmulatedKernel>(kernel));
  call_kernel(ops, fn, args, arena_hints_[index], last_launches_, &outs);
}

}  // namespace scangen
