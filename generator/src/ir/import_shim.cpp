#include "ir/import_shim.h"

#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "codegen/cpp_printer.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/sha256.h"

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::ir {

std::string jit_include_lines(const Import& import) {
  std::ostringstream os;
  for (const auto& dep : import.dependencies) {
    std::string hash;
    try {
      hash = sha256_file_hex(dep);
    } catch (const std::exception&) {
      hash = "unreadable";  // the compiler will say why
    }
    os << "// sha256 " << hash << " " << dep.string() << "\n";
  }
  os << "#include " << codegen::quote(import.header.string()) << "\n";
  return os.str();
}

std::string import_shim_source(const Import& import) {
  std::ostringstream os;
  os << "// scangen: the interpreter's shim for " << import.spelling << "\n#include <cstdint>\n";
  os << jit_include_lines(import) << "\n" << embedded::file("common/scangen_abi.h") << "\n";
  for (size_t i = 0; i < import.functions.size(); ++i) {
    const ImportedFunction& f = import.functions[i];
    os << "extern \"C\" __attribute__((visibility(\"default\"))) void scangen_import_" << i
       << "(const void* const* args, void* result) {\n  *static_cast<" << codegen::ctype(f.result)
       << "*>(result) = scangen_export::" << f.name << "(";
    for (size_t p = 0; p < f.params.size(); ++p)
      os << (p ? ", " : "") << "*static_cast<const " << codegen::ctype(f.params[p]) << "*>(args[" << p << "])";
    os << ");\n}\n\n";
  }
  os << embedded::file("interpreter/scangen_import_shim.h");
  return os.str();
}

ImportedEntry imported_entry(const Import& import, int function) {
  // Loaded shims stay loaded for the process, by source text (which holds the headers' hashes).
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CpuModule>> loaded;
  std::string source = import_shim_source(import);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(source);
  if (it == loaded.end()) {
    CpuJit jit;
    it = loaded.emplace(source, jit.compile_and_load(source)).first;
  }
  std::string symbol = "scangen_import_" + std::to_string(function);
  void* entry = it->second->symbol(symbol.c_str());
  if (!entry) throw InternalError("the shim of " + import.header.string() + " has no " + symbol);
  return reinterpret_cast<ImportedEntry>(entry);
}

}  // namespace scangen::ir
