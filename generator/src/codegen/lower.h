// Lowering: program IR -> loop IR, shared by every backend.
//
// Decisions made here, for all backends alike:
//  - one loop per scan (the time loop), with the step's work inside it;
//  - chains of element-wise operations fused into one loop over their elements (a value used
//    once, of the same shape as its user, is computed where it is used);
//  - storage: a state keeps its init rows in front of its results, so that X[t - k] is a row of
//    the same buffer (no copies, no branches); a state whose results nothing reads keeps only
//    max_lag + 1 rows (a ring); scalar states live in variables;
//  - a step writes its outputs straight into their rows of the result buffers;
//  - every buffer is allocated before the loop that uses it when its size allows, and shapes are
//    computed and checked at run time with the same messages as the interpreter.
#pragma once

#include "codegen/loop_ir.h"
#include "ir/ir.h"

namespace scangen::codegen {

// Lowers every function. The loop-IR passes are the driver's to run (lir_passes.h).
lir::Module lower_program(const ir::Program& program);

}  // namespace scangen::codegen
