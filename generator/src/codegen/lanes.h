// The "independent lanes" strategy of the CUDA backend (docs/cuda.md): a time loop whose every
// step is element loops over the same N lanes, where lane i of a step reads only lane i of what
// the loop writes (h[t] = a[t] * h[t-1] + b[t] over N channels), is turned inside out: one element
// loop over the lanes, each running the whole time loop. On a GPU each thread then owns a lane
// for all T steps, with coalesced loads and no barrier per step.
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// Whether the time loop `time` of `f` is such a loop: its lane count N, or null (the CPU's threads
// pass gives each thread a band of the lanes for all the steps).
lir::ExprRef independent_lanes(const lir::Function& f, const lir::Stmt& time);

// Rewrites every such time loop of `f` (outside other element loops); returns how many.
int interchange_lanes(lir::Function& f);

}  // namespace scangen::codegen
