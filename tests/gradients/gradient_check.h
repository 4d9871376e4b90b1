// The finite-difference gradient checker (gradcheck_test.cpp; docs/gradients.md says what it runs).
//
// For a function f of the IR it builds, in f64 (every f32 of f promoted), a scalar cost: the sum
// over f's float results of each element times a fixed weight (distinct per element, so that no
// error can cancel), and a gradient function returning the cost and d cost / d x for every float
// argument x, built by the same reverse mode as `grad`. The checker compares those gradients with
// central differences of the cost, element by element, where the cost is smooth there.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "scangen/runtime/tensor.h"

namespace scangen::gradcheck {

// f with every f32 (arguments, results, constants, casts, inside scans too) made f64, and without
// truncate_gradient (which makes a gradient differ from the derivative on purpose; its own tests
// are samples with expected outputs).
ir::Function promote_to_f64(const ir::Function& f);

struct GradientFunctions {
  ir::Function cost;       // (args of f in f64) -> f64 cost
  ir::Function gradient;   // (args) -> (cost, d cost / d each float argument, in argument order)
  std::vector<int> float_args;  // the arguments with a gradient
};

// nullopt when f has no float argument or no float result.
std::optional<GradientFunctions> gradient_functions(const ir::Function& f, const std::string& name);

// Arguments promoted like the function (f32 tensors become f64).
std::vector<HostTensor> promote_arguments(const std::vector<HostTensor>& args);

struct ElementCounts {
  int64_t checked = 0;      // elements whose gradient matched the finite difference
  int64_t not_smooth = 0;   // elements skipped: the cost is not smooth there (a kink, a jump)
};

// Compares `gradients` (gradient function's results after the cost) with central differences of
// the cost function on the interpreter. Returns an empty string when they agree, else what differs.
std::string compare_with_finite_differences(const GradientFunctions& g, const std::vector<HostTensor>& args,
                                            const std::vector<HostTensor>& gradient_results, ElementCounts& counts);

// Bit-for-bit equality of two results (NaNs equal when their bits are).
bool same_bits(const HostTensor& a, const HostTensor& b);

}  // namespace scangen::gradcheck
