#include "support/cxx_text.h"

namespace scangen {

const char* ctype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
  }
  return "void";
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace scangen
