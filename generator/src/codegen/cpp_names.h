// Names in emitted C++: which identifiers a name from a .scan file must not become, shared by the
// lowering (local variables) and the CPU printer (the typed API).
#pragma once

#include <string>

namespace scangen::codegen {

// A C++ keyword, a type or macro emitted code uses unqualified (int64_t, INT64_MIN, errno, ...),
// or a name of the support code (scangen_*, SCANGEN_*, sg, result, ...).
bool is_reserved_cpp_name(const std::string& name);

// `name` with every character that cannot appear in an identifier replaced by '_', prefixed when
// it would start with a digit; not yet checked against is_reserved_cpp_name.
std::string cpp_identifier_chars(const std::string& name);

}  // namespace scangen::codegen
