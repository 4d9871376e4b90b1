// Spellings of C++ that every layer emitting C++ text shares: the C++ type of an element dtype
// and a string literal. Emitted code, the interpreter's import shim and the CUDA host glue spell
// them alike.
#pragma once

#include <string>

#include "scangen/runtime/dtype.h"

namespace scangen {

const char* ctype(DType d);                // float, int64_t, ...
std::string quote(const std::string& s);   // a C++ string literal

}  // namespace scangen
