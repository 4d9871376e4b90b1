// The CUDA backend's decisions about each kernel, as passes of the loop IR (lir_passes.def) that
// record them in lir::Function::kernel: which buffers live in the block's shared memory, whether
// the kernel asks for every resident thread (__launch_bounds__), and how many threads a launch is
// worth. The CUDA printer prints what they decided.
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// kernel.block_shared: the storages a step writes and the following steps read back. Returns
// their number.
int place_block_shared(lir::Function& f);
// kernel.full_occupancy. Returns 1 when set.
int choose_launch_bounds(lir::Function& f);
// kernel.width: the terms of the launch's parallel width. Returns their number.
int measure_parallel_width(lir::Function& f);

}  // namespace scangen::codegen
