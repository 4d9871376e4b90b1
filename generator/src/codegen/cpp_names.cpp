#include "codegen/cpp_names.h"

#include <set>

namespace scangen::codegen {

bool is_reserved_cpp_name(const std::string& s) {
  static const std::set<std::string> words = {
      // keywords
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast", "continue",
      "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
      "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq",
      // types and macros emitted code uses unqualified
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
      "ptrdiff_t", "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX", "errno", "NULL", "EOF", "NAN", "INFINITY",
      "HUGE_VAL", "HUGE_VALF", "assert", "offsetof",
      // namespaces and names of the support code and the generated API
      "std", "scangen", "sg", "main", "result", "results",
      // names of CUDA kernels (the context, the launch record) and CUDA's built-in variables
      "sgc", "ctx", "launch", "tensors", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3"};
  // The support code's own names (scangen_rt_v1, scangen_tensor, SCANGEN_IVDEP, ...) never end in
  // '_', so appending one frees a name.
  bool support = (s.rfind("scangen_", 0) == 0 || s.rfind("SCANGEN_", 0) == 0) && s.back() != '_';
  return support || words.count(s) > 0;
}

std::string cpp_identifier_chars(const std::string& name) {
  std::string out;
  for (char c : name) out += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "v_" + out;
  return out;
}

}  // namespace scangen::codegen
