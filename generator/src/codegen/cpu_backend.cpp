// The CPU backend: prints the loop IR as C++17, a header (the typed API) and a source (the loops,
// the helpers of templates/, and the C ABI entry points the JIT loads).
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "codegen/backend.h"
#include "codegen/cpp_printer.h"
#include "codegen/cpp_names.h"
#include "codegen/imports.h"
#include "support/check.h"

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::StmtKind;

const ApiTypes kCpuTypes = {
    [](DType d, bool is_const) {
      return std::string("scangen::TensorRef<") + (is_const ? "const " : "") + ctype(d) + ">";
    },
    [](DType d) { return std::string("scangen::Tensor<") + ctype(d) + ">"; }};

class CpuBackend {
 public:
  std::vector<EmittedFile> emit(const lir::Module& module, const EmitOptions& options) const {
    std::string header = print_header(module, options);
    std::string source = print_source(module, options, header);
    if (options.single_translation_unit) return {{options.stem + ".cpp", source}};
    return {{options.stem + ".h", header}, {options.stem + ".cpp", source}};
  }

 private:
  std::string print_header(const lir::Module& module, const EmitOptions& o) const {
    std::ostringstream os;
    const std::string guard = include_guard(o.stem, "h");
    os << generated_banner(module);
    os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
    os << embedded::file("cpu/scangen_cpu_api.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\n\n";
    std::vector<Api> apis = apis_of(module, kCpuTypes);
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      const Api& a = apis[f];
      os << "// fn " << lf.name << lf.signature.text << "\n";
      if (!a.result_struct.empty()) os << a.result_struct;
      os << a.result_type << " " << a.name << "(" << a.params << ");\n";
      if (!a.out_params.empty())
        os << "// The same, writing the results into the caller's tensors (docs/cli.md#the-generated-c-api).\n"
           << "void " << a.name << "(" << a.params << (a.params.empty() ? "" : ", ") << a.out_params << ");\n";
      os << "\n";
    }
    os << "}  // namespace " << o.cpp_namespace << "\n\n#endif  // " << guard << "\n";
    return os.str();
  }

  std::string print_source(const lir::Module& module, const EmitOptions& o,
                           const std::string& header) const {
    std::ostringstream os;
    os << generated_banner(module);
    if (o.single_translation_unit) {
      os << "// The header " << o.stem << ".h follows.\n" << header.substr(header.find('\n') + 1) << "\n";
    } else {
      os << "#include \"" << o.stem << ".h\"\n\n";
    }
    os << "#include <limits>\n\n";
    print_imports(module, o, os);
    os << embedded::file("common/scangen_scalar.h") << "\n";
    os << embedded::file("cpu/scangen_cpu_support.h") << "\n";
    os << embedded::file("cpu/scangen_cpu_matmul.h") << "\n";
    // The associative scans (scan_affine, scan_add, ...) that the parallel-scan rewrite calls.
    os << embedded::file("cpu/scangen_cpu_scan.h") << "\n";
    // The fast floating-point mode's kernel and vectorizable math functions, which its passes call.
    if (module.fp_mode == FpMode::Fast) os << embedded::file("cpu/scangen_cpu_fast.h") << "\n";
    if (uses_threads(module)) os << embedded::file("cpu/scangen_cpu_threads.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\nnamespace {\n\nnamespace sg = scangen::scalar_v1;\n\n";
    for (size_t f = 0; f < module.functions.size(); ++f) print_impl(module.functions[f], os);
    os << "}  // namespace\n\n";
    std::vector<Api> apis = apis_of(module, kCpuTypes);
    for (size_t f = 0; f < module.functions.size(); ++f)
      print_api(module.functions[f], apis[f], os);
    os << "}  // namespace " << o.cpp_namespace << "\n\n";
    print_abi(module, o, os);
    return os.str();
  }

  // The imported headers: for the JIT (one translation unit compiled in the cache directory) by
  // absolute path, after the hashes of their files, which put the headers' contents into the
  // cache key; for a build system by the spelling of the import statement, which the build finds
  // on its include path (the .scan file's directory and the -I directories; docs/cli.md).
  static void print_imports(const lir::Module& module, const EmitOptions& o, std::ostringstream& os) {
    if (module.imports.empty()) return;
    os << "// Imported C++ headers (namespace scangen_export).\n";
    for (const lir::Include& import : module.imports)
      os << (o.single_translation_unit ? jit_include_lines(import.header, import.dependencies) : "#include \"" + import.spelling + "\"\n");
    os << "\n";
  }

  // Whether a function calls the thread pool (code for one thread does not include it, so its
  // text, and the goldens, stay as they were).
  static bool uses_threads(const lir::Module& module) {
    for (const lir::Function& f : module.functions)
      if (f.threads != 1) return true;
    return false;
  }

  static void print_impl(const lir::Function& lf, std::ostringstream& os) {
    std::vector<std::string> params = impl_parameters(lf);
    for (const lir::Param& r : lf.results)
      params.push_back((r.rank == 0 ? std::string(ctype(r.dtype)) : std::string("scangen::Tensor<") + ctype(r.dtype) + ">") +
                       "& " + r.name);
    for (const std::string& p : impl_out_parameters(lf)) params.push_back(p);
    os << "// fn " << lf.name << lf.signature.text << "\n";
    os << "void " << lf.symbol << "(";
    for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
    os << ") {\n";
    for (const lir::StorageDecl& s : lf.storages) os << "  scangen_rt_v1::Storage<" << ctype(s.elem) << "> " << s.name << ";\n";
    CppPrinter p;
    p.stmt(*lf.body, 2, os);
    os << "}\n\n";
  }

  // The typed API: the form that allocates its results and, for a function that has it, the form
  // that writes them into the caller's tensors (`outs`: their names).
  static void print_api(const lir::Function& lf, const Api& a, std::ostringstream& os) {
    print_api_form(lf, a, {}, os);
    if (!a.out_params.empty()) print_api_form(lf, a, a.out_names, os);
  }

  static void print_api_form(const lir::Function& lf, const Api& a, const std::vector<std::string>& outs,
                             std::ostringstream& os) {
    const lir::Signature& fn = lf.signature;
    if (outs.empty()) os << a.result_type << " " << a.name << "(" << a.params << ") {\n";
    else os << "void " << a.name << "(" << a.params << (a.params.empty() ? "" : ", ") << a.out_params << ") {\n";
    os << rank_checks(lf, a, "scangen_rt_v1::fail");
    if (!outs.empty()) os << out_checks(lf, a, "scangen_rt_v1::fail", "scangen_rt_v1::check_disjoint");
    std::vector<std::string> results;
    if (fn.results.size() == 1) {
      os << "  " << a.result_type << " " << a.local << "{};\n";
      results.push_back(a.local);
    } else {
      os << "  " << a.result_type << " " << a.local << ";\n";
      for (const std::string& f : a.result_fields) results.push_back(a.local + "." + f);
    }
    os << "  " << lf.symbol << "(";
    bool first = true;
    for (size_t i = 0; i < fn.args.size(); ++i) {
      const lir::Param& p = lf.params[i];
      const std::string& arg = a.arg_names[i];
      os << (first ? "" : ", ");
      first = false;
      if (p.rank == 0) {
        os << arg;
        continue;
      }
      os << arg << ".data()";
      for (int d = 0; d < p.rank; ++d) os << ", " << arg << ".dim(" << d << ")";
    }
    for (const std::string& r : results) {
      os << (first ? "" : ", ") << r;
      first = false;
    }
    std::string into = impl_out_arguments(lf, outs);
    if (!into.empty()) os << (first ? "" : ", ") << into;
    os << ");\n";
    if (outs.empty()) {
      os << "  return " << a.local << ";\n}\n\n";
      return;
    }
    // Scalar results come back by value; the tensors are in the caller's memory already.
    for (size_t i = 0; i < fn.results.size(); ++i)
      if (fn.results[i].rank == 0) os << "  *" << outs[i] << ".data() = " << results[i] << ";\n";
    os << "}\n\n";
  }

  // The end of an ABI entry: the exceptions of the call as statuses and messages.
  static void print_abi_catch(std::ostringstream& os) {
    os << "  } catch (const scangen::Error& e) {\n"
       << "    error->line = e.line();\n    error->column = e.column();\n"
       << "    std::snprintf(error->message, sizeof error->message, \"%s\", e.what());\n"
       << "    return SCANGEN_USER_ERROR;\n"
       << "  } catch (const std::bad_alloc&) {\n"
       << "    std::snprintf(error->message, sizeof error->message, \"%s\", \"out of memory\");\n"
       << "    return SCANGEN_USER_ERROR;\n"
       << "  } catch (const std::exception& e) {\n"
       << "    std::snprintf(error->message, sizeof error->message, \"%s\", e.what());\n"
       << "    return SCANGEN_INTERNAL_ERROR;\n  }\n}\n\n";
  }

  // The ABI entry of the form that writes into the caller's tensors: the typed API's, whose
  // checks (ranks, overlaps, shapes) it keeps.
  static void print_into_entry(const lir::Function& lf, const Api& a, size_t f, const EmitOptions& o,
                               std::ostringstream& os) {
    const lir::Signature& fn = lf.signature;
    os << "int32_t scangen_into_entry_" << f << "(const scangen_tensor* args, int32_t num_args, scangen_tensor* results,\n"
       << "                int32_t num_results, scangen_error* error) {\n";
    os << "  error->line = 0;\n  error->column = 0;\n  error->message[0] = '\\0';\n";
    os << "  if (num_args != " << fn.args.size() << " || num_results != " << fn.results.size() << ") {\n"
       << "    std::snprintf(error->message, sizeof error->message, \"%s\", \"wrong number of arguments or results\");\n"
       << "    return SCANGEN_INTERNAL_ERROR;\n  }\n";
    os << "  try {\n    " << o.cpp_namespace << "::" << a.name << "(";
    for (size_t i = 0; i < lf.params.size(); ++i) {
      const lir::Param& p = lf.params[i];
      const std::string t = "args[" + std::to_string(i) + "]";
      os << (i ? ", " : "");
      if (p.rank == 0) os << "*static_cast<const " << ctype(p.dtype) << "*>(" << t << ".data)";
      else
        os << "scangen::TensorRef<const " << ctype(p.dtype) << ">(static_cast<const " << ctype(p.dtype) << "*>(" << t
           << ".data), " << t << ".shape, " << t << ".rank)";
    }
    for (size_t i = 0; i < fn.results.size(); ++i) {
      const char* c = ctype(fn.results[i].dtype);
      const std::string t = "results[" + std::to_string(i) + "]";
      os << (i || !lf.params.empty() ? ", " : "") << "scangen::TensorRef<" << c << ">(static_cast<" << c << "*>(" << t
         << ".data), " << t << ".shape, " << t << ".rank)";
    }
    os << ");\n    return SCANGEN_OK;\n";
    print_abi_catch(os);
  }

  static void print_abi(const lir::Module& module, const EmitOptions& o, std::ostringstream& os) {
    os << "#ifdef SCANGEN_EMIT_MODULE_ABI\n// The C ABI the scangen runtime loads (templates/common/scangen_abi.h).\n";
    os << embedded::file("common/scangen_abi.h") << "\n";
    os << "namespace {\n\n";
    std::vector<Api> apis = apis_of(module, kCpuTypes);
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      const lir::Signature& fn = lf.signature;
      std::string entry = "scangen_entry_" + std::to_string(f);
      os << "int32_t " << entry << "(const scangen_tensor* args, int32_t num_args, scangen_tensor* results,\n"
         << "                int32_t num_results, scangen_error* error) {\n";
      os << "  error->line = 0;\n  error->column = 0;\n  error->message[0] = '\\0';\n";
      os << "  if (num_args != " << fn.args.size() << " || num_results != " << fn.results.size() << ") {\n"
         << "    std::snprintf(error->message, sizeof error->message, \"%s\", \"wrong number of arguments or results\");\n"
         << "    return SCANGEN_INTERNAL_ERROR;\n  }\n";
      os << "  try {\n";
      for (size_t i = 0; i < fn.results.size(); ++i) {
        const lir::Param& r = lf.results[i];
        os << "    " << (r.rank == 0 ? std::string(ctype(r.dtype)) : std::string("scangen::Tensor<") + ctype(r.dtype) + ">")
           << " r" << i << "{};\n";
      }
      os << "    " << o.cpp_namespace << "::" << lf.symbol << "(";
      bool first = true;
      for (size_t i = 0; i < lf.params.size(); ++i) {
        const lir::Param& p = lf.params[i];
        os << (first ? "" : ", ");
        first = false;
        if (p.rank == 0) {
          os << "*static_cast<const " << ctype(p.dtype) << "*>(args[" << i << "].data)";
          continue;
        }
        os << "static_cast<const " << ctype(p.dtype) << "*>(args[" << i << "].data)";
        for (int d = 0; d < p.rank; ++d) os << ", args[" << i << "].shape[" << d << "]";
      }
      for (size_t i = 0; i < fn.results.size(); ++i) {
        os << (first ? "" : ", ") << "r" << i;
        first = false;
      }
      std::string into = impl_out_arguments(lf, {});
      if (!into.empty()) os << (first ? "" : ", ") << into;
      os << ");\n";
      for (size_t i = 0; i < fn.results.size(); ++i) {
        const lir::Param& r = lf.results[i];
        std::string res = "results[" + std::to_string(i) + "]";
        os << "    " << res << ".dtype = " << abi_dtype(r.dtype) << ";\n    " << res << ".rank = " << r.rank << ";\n";
        if (r.rank == 0) {
          os << "    " << res << ".owner = std::malloc(64);\n"
             << "    if (!" << res << ".owner) throw std::bad_alloc();\n"
             << "    *static_cast<" << ctype(r.dtype) << "*>(" << res << ".owner) = r" << i << ";\n"
             << "    " << res << ".data = " << res << ".owner;\n";
          continue;
        }
        os << "    for (int d = 0; d < " << r.rank << "; ++d) " << res << ".shape[d] = r" << i << ".dim(d);\n"
           << "    " << res << ".data = r" << i << ".data();\n"
           << "    " << res << ".owner = r" << i << ".release();\n";
      }
      os << "    return SCANGEN_OK;\n";
      print_abi_catch(os);
      if (!apis[f].out_params.empty()) print_into_entry(lf, apis[f], f, o, os);
      auto list = [&](const char* name, const std::vector<std::string>& items) {
        os << "const int32_t " << name << "_" << f << "[] = {";
        for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
        if (items.empty()) os << "0";
        os << "};\n";
      };
      std::vector<std::string> ad, ar, rd, rr;
      for (const auto& a : fn.args) {
        ad.push_back(abi_dtype(a.dtype));
        ar.push_back(std::to_string(a.rank));
      }
      for (const auto& r : fn.results) {
        rd.push_back(abi_dtype(r.dtype));
        rr.push_back(std::to_string(r.rank));
      }
      list("arg_dtypes", ad);
      list("arg_ranks", ar);
      list("result_dtypes", rd);
      list("result_ranks", rr);
      os << "\n";
    }
    os << "const scangen_function_info functions[] = {\n";
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const lir::Function& lf = module.functions[f];
      const lir::Signature& fn = lf.signature;
      os << "    {" << quote(lf.name) << ", " << quote(fn.text) << ", scangen_entry_" << f << ", "
         << fn.args.size() << ", " << fn.results.size() << ", arg_dtypes_" << f << ", arg_ranks_" << f
         << ", result_dtypes_" << f << ", result_ranks_" << f << "},\n";
    }
    os << "};\n\nconst scangen_into_entry into_entries[] = {";
    for (size_t f = 0; f < module.functions.size(); ++f)
      os << (f ? ", " : "") << (apis[f].out_params.empty() ? "nullptr" : "scangen_into_entry_" + std::to_string(f));
    if (module.functions.empty()) os << "nullptr";
    os << "};\n\nconst scangen_module_info module_info = {SCANGEN_ABI_VERSION, " << quote(module.source_path) << ", "
       << module.functions.size() << ", functions, into_entries};\n\n}  // namespace\n\n";
    os << "extern \"C\" __attribute__((visibility(\"default\"))) const scangen_module_info* scangen_module_v1(void) {\n"
       << "  return &module_info;\n}\n#endif  // SCANGEN_EMIT_MODULE_ABI\n";
  }
};

}  // namespace

std::vector<EmittedFile> print_cpp(const lir::Module& module, const EmitOptions& options) {
  return CpuBackend().emit(module, options);
}

}  // namespace scangen::codegen
