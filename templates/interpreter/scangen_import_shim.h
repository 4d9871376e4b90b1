// The end of the interpreter's shim for imported C++ headers (generator/src/interpreter/import_shim.cpp):
// a module without scangen functions, so that the CPU JIT loads it like emitted code; the
// interpreter finds the extern "C" wrappers written before this text with dlsym. The shim's source
// starts with templates/common/scangen_abi.h.
#ifndef SCANGEN_ABI_H
#include "scangen_abi.h"
#endif

namespace {
const scangen_module_info scangen_import_shim_info = {SCANGEN_ABI_VERSION, "imported headers", 0, nullptr};
}  // namespace

extern "C" __attribute__((visibility("default"))) const scangen_module_info* scangen_module_v1(void) {
  return &scangen_import_shim_info;
}
