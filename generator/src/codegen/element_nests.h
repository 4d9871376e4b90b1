// Element nests of the CUDA backend (docs/cuda.md): the lowering writes element-wise work over a
// tensor of rank > 1 as serial loops around an element loop over the last dimension, and a
// reduction along an axis as a serial loop over the rows around element loops and a serial loop
// over the reduced axis. Printed for a GPU as they are, only the last dimension is spread over the
// threads, with a barrier per row:
//
//   for (o < rows) { for (j < n, spread) {...} barrier; for (k < len) { for (j < n, spread) {...} barrier } }
//
// When each (o, j) touches only its own addresses of the buffers the nest writes (o * n + j, plus
// an offset the same for all), the nest becomes one element loop over rows * n in which each
// element runs the serial loops itself, in their order: one barrier, and every thread busy.
// Indices that work out to the element (o * n + j) are rewritten to it, so that an enclosing time
// loop can then be turned into independent lanes (lanes.h).
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// Whether the serial loop `rows` of `f` is such a nest: the extent n of its element loops, or null
// (the CPU's threads pass runs the rows of such a nest on different threads).
lir::ExprRef independent_element_nest(const lir::Function& f, const lir::Stmt& rows);

// Flattens every such nest of `f` outside element loops, innermost first; returns how many.
int flatten_element_nests(lir::Function& f);

}  // namespace scangen::codegen
