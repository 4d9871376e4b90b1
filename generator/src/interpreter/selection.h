// The interpreter's evaluation of the selection and layout nodes (gather, scatter_add, argmax and
// argmin, top_k, transpose, a checked reshape). Their run-time messages are the ones the lowering
// emits (codegen/lowering/selection.cpp), word for word.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "scangen/runtime/tensor.h"

namespace scangen::interp {

// `given` (negative counts from the end) as a position in dimension `dim` of size n, or the
// run-time error "index ... is out of range ...".
int64_t checked_index(int64_t given, int64_t n, size_t dim, const Loc& loc);
HostTensor transpose(const HostTensor& x, const std::vector<int>& perm);
HostTensor gather(const HostTensor& x, const HostTensor& idx, const Loc& loc);
HostTensor scatter_add(const HostTensor& x, const HostTensor& idx, const HostTensor& v, const Loc& loc);
HostTensor arg_reduce(ir::ReduceOp op, const HostTensor& x, std::optional<int> axis, const Loc& loc);
HostTensor top_k(const HostTensor& x, int64_t k, const Loc& loc);
// Fails unless `shape` has no negative size and as many elements as x.
void check_reshape(const HostTensor& x, const Shape& shape, const Loc& loc);

}  // namespace scangen::interp
