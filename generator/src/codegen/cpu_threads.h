// The threads of the CPU backend (the loop-IR pass `threads`, lir_passes.def; docs/loop-ir.md):
// which loops of a function compiled for several threads (lir::Function::threads, --threads) run
// on the thread pool of templates/cpu/scangen_cpu_threads.h, recorded as loops of kind Parallel
// and calls of parallel_matmul, which the CPU printer prints as they are.
//
//  - A time loop of independent lanes (lanes.h: h[t] = a[t] * h[t-1] + b[t] over N channels) runs
//    once, its lanes split into bands: each thread runs every step of its band, with no barrier
//    between steps.
//  - An element loop outside other element loops, and a serial loop whose rows touch only their
//    own elements (element_nests.h), are split into chunks of iterations, one fork-join each.
//  - A matrix product is split by rows of its result (parallel_matmul).
//
// Every element is computed by one thread, in the order of the serial code, so the results are
// the same bits for every thread count. Small loops stay on the calling thread: each parallel
// loop records its grain, the fewest iterations worth a thread, from the work of its body.
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// Spreads the loops of `f` over f.threads threads (nothing when it is 1); returns how many loops
// and products it made parallel.
int plan_threads(lir::Function& f);

}  // namespace scangen::codegen
