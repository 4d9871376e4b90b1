// The loop-IR passes of the fast floating-point mode (`--fp fast`, CPU backend only;
// lir_passes.def, stage "fast"). Strict mode never runs them: every backend then computes the
// interpreter's bits. Each pass records its decision in the loop IR (a callee, a call expression,
// a loop's reduction), and the C++ printer prints it; docs/performance.md gives the error bounds.
#pragma once

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// Float matrix products call the FMA kernel `matmul_fast` (templates/cpu/scangen_cpu_fast.h)
// instead of `matmul`; returns how many.
int use_fast_products(lir::Function& f);
// Float a * b + c (either order) and a * b - c, c - a * b become std::fma calls; returns how many.
int contract_fma(lir::Function& f);
// exp, log, log1p, expm1, sin, cos, tanh and sigmoid of floats become calls of the
// scangen_rt_v1::fast_v1 functions, which vectorize through glibc's libmvec; returns how many.
int use_vector_math(lir::Function& f);
// A serial loop whose whole body is `acc = acc + e` (or `*`) over a float `acc` that e does not
// read is marked as a reduction into acc, which may be summed in any order (vectorized partial
// sums); returns how many.
int reassociate_reductions(lir::Function& f);

}  // namespace scangen::codegen
