#include "interpreter/import_shim.h"

#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "codegen/imports.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/errors.h"
#include "support/cxx_text.h"

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::interp {

using ir::Import;
using ir::ImportedFunction;

std::string import_shim_source(const Import& import) {
  std::ostringstream os;
  os << "// scangen: the interpreter's shim for " << import.spelling << "\n#include <cstdint>\n";
  os << codegen::jit_include_lines(import.header, import.dependencies) << "\n" << embedded::file("common/scangen_abi.h") << "\n";
  for (size_t i = 0; i < import.functions.size(); ++i) {
    const ImportedFunction& f = import.functions[i];
    os << "extern \"C\" __attribute__((visibility(\"default\"))) void scangen_import_" << i
       << "(const void* const* args, void* result) {\n  *static_cast<" << ctype(f.result)
       << "*>(result) = scangen_export::" << f.name << "(";
    for (size_t p = 0; p < f.params.size(); ++p)
      os << (p ? ", " : "") << "*static_cast<const " << ctype(f.params[p]) << "*>(args[" << p << "])";
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

}  // namespace scangen::interp
