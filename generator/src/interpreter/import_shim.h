// How code outside the C++ backends reaches imported C++ functions: the interpreter calls them
// through a shim, a translation unit that includes each header and exports one extern "C" wrapper
// per function, compiled by the CPU JIT (cached on disk, keyed on the source text) with the flags
// of emitted code, so that the interpreter and the CPU backend agree bit for bit.
#pragma once

#include <string>

#include "ir/ir.h"

namespace scangen::interp {

// Reads the arguments through args[i] (a pointer to one scalar of parameter i's dtype) and writes
// the result through `result`.
using ImportedEntry = void (*)(const void* const* args, void* result);

// The shim's source for one import: a wrapper `scangen_import_<i>` for each function i.
std::string import_shim_source(const ir::Import& import);

// The wrapper of `import`'s function `function`, compiling and loading the shim on first use in
// this process. Throws RuntimeError when the header no longer compiles.
ImportedEntry imported_entry(const ir::Import& import, int function);

}  // namespace scangen::interp
