// Whether a node computes each row of a batch from that row alone (row_wise.h).
#include "ir/row_wise.h"

namespace scangen::ir {
namespace {

bool fails(std::string* why, const char* what) {
  if (why) *why = what;
  return false;
}

}  // namespace

int batch_axis(const Type& t, const Dim& batch) {
  int axis = kNoBatchAxis;
  for (int i = 0; i < t.rank(); ++i)
    if (t.shape[size_t(i)].same_as(batch)) axis = axis == kNoBatchAxis ? i : kSeveralBatchAxes;
  return axis;
}

bool RowWise::holds(const Node& n, std::string* why) const {
  for (const Type& t : n.output_types())
    if (axis(t) == kSeveralBatchAxes) return fails(why, "a value with the batch on two axes");
  for (const Value& in : n.inputs())
    if (axis(in.type()) == kSeveralBatchAxes) return fails(why, "a value with the batch on two axes");
  const int out = axis(n.output_types()[0]);
  const int in = n.num_inputs() > 0 ? axis(n.input(0).type()) : kNoBatchAxis;
  switch (n.kind()) {
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::Fill:      // the same in every row
    case NodeKind::DimSize:   // a size is the same for every row
      return true;
    case NodeKind::Arange: return out == kNoBatchAxis || fails(why, "an arange along the batch");
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Call:
    case NodeKind::StopGradient: return broadcasts_rows(n, out) || fails(why, "rows broadcast across the batch");
    case NodeKind::Reduce:
    case NodeKind::ArgReduce:
    case NodeKind::TopK:
    case NodeKind::CheckShape: return in == out || fails(why, "a reduction over the batch");
    case NodeKind::Reshape:
      return (in == out && (out == kNoBatchAxis || out == 0)) || fails(why, "a reshape of the batch");
    case NodeKind::Transpose:
      return (in == kNoBatchAxis) == (out == kNoBatchAxis) || fails(why, "a transpose of the batch");
    case NodeKind::MatMul: return product_of_rows(n, out) || fails(why, "a matrix product over the batch");
    case NodeKind::Index:
    case NodeKind::Update:
    case NodeKind::Gather:
    case NodeKind::ScatterAdd:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::Scan: return !touches_batch(n) || fails(why, "an index, gather or scan of the batch");
  }
  return false;
}

bool RowWise::touches_batch(const Node& n) const {
  for (const Type& t : n.output_types())
    if (axis(t) != kNoBatchAxis) return true;
  for (const Value& in : n.inputs())
    if (axis(in.type()) != kNoBatchAxis) return true;
  return false;
}

// Element-wise: each operand's batch axis, aligned from the right, is the result's.
bool RowWise::broadcasts_rows(const Node& n, int out) const {
  const int rank = n.output_types()[0].rank();
  for (const Value& in : n.inputs()) {
    int a = axis(in.type());
    if (a == kNoBatchAxis) continue;
    if (out == kNoBatchAxis || a + rank - in.type().rank() != out) return false;
  }
  return true;
}

// lhs [B, k] @ W [k, m] (W the same for every row), or [B, ..., k] @ [B, ..., m] batched by row.
bool RowWise::product_of_rows(const Node& n, int out) const {
  const Type &lhs = n.input(0).type(), &rhs = n.input(1).type();
  const int a = axis(lhs), b = axis(rhs);
  if (a == kNoBatchAxis && b == kNoBatchAxis) return out == kNoBatchAxis;
  if (a == 0 && b == kNoBatchAxis) return lhs.rank() >= 2 && rhs.rank() == 2 && out == 0;
  return a == 0 && b == 0 && out == 0 && lhs.rank() >= 3 && rhs.rank() == lhs.rank();
}

}  // namespace scangen::ir
