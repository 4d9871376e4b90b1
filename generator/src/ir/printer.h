// A text form of the IR for people (`scangen ir`), e.g.
//   fn power(%A: f32[n], %k: i32) -> f32[n] {
//     %0: i64 = dim %A, 0
//     ...
//     %4: f32[k, n] = scan steps=%3 states(acc: init %2, lags [1]) params(%A) {
//     ^step(%t: i64, %acc[t-1]: f32[n], %A: f32[n]):
//       %5: f32[n] = mul %acc[t-1], %A
//       yield acc=%5
//     }
// Values are numbered in a deterministic order; a multi-output node's results are %N#name.
#pragma once

#include <string>

#include "ir/ir.h"

namespace scangen::ir {

std::string print_program(const Program& p);
std::string print_function(const Function& f);
// A graph on its own (for tests and messages).
std::string print_graph(const Graph& g);

}  // namespace scangen::ir
