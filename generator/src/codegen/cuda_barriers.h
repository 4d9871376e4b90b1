// The barriers of a CUDA kernel, placed in its loop IR (CUDA backend only): see cuda_barriers.cpp.
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// Inserts Barrier statements where threads of the launch must wait for each other, and splits a
// uniform store that loads what it overwrites into lets, a barrier and the store. Returns the
// number of barriers placed.
int place_barriers(lir::Function& f);

}  // namespace scangen::codegen
