// The interpreter's run-time errors, formatted from the catalogue (ir/runtime_errors.def) with the
// integers it has, as emitted code formats the same entries with the integers it computes.
#pragma once

#include <string>
#include <vector>

#include "ir/runtime_errors.h"
#include "scangen/runtime/tensor.h"
#include "support/source.h"

namespace scangen::interp {

using ErrorArg = ir::ErrorArg<int64_t>;
using ir::RuntimeErrorId;

// Throws RuntimeError: entry `id` with `args`, at loc.
[[noreturn]] void fail(const Loc& loc, RuntimeErrorId id, const std::vector<ErrorArg>& args);
// A value too large to allocate, said of `what` ("the value", "the rows of 'x'") at loc.
[[noreturn]] void fail_allocation(const AllocationError& e, const std::string& what, const Loc& loc);

}  // namespace scangen::interp
