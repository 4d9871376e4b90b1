// Recognition of associative scan steps (assoc.h).
#include "ir/assoc.h"

#include <utility>

namespace scangen::ir {
namespace {

bool is_node(const Value& v, const Value& target) { return v.node == target.node && v.index == target.index; }

const BinaryNode* binary(const Value& v, BinaryOp op) {
  if (v.node->kind() != NodeKind::Binary) return nullptr;
  const auto* b = v.node->as<BinaryNode>();
  return b->op() == op ? b : nullptr;
}

// The other operand of a binary node when one of its operands is `h`: the operand order is
// reported in *h_first.
std::optional<Value> other_than(const BinaryNode& n, const Value& h, bool* h_first) {
  if (is_node(n.input(0), h) && !is_node(n.input(1), h)) {
    *h_first = true;
    return n.input(1);
  }
  if (is_node(n.input(1), h) && !is_node(n.input(0), h)) {
    *h_first = false;
    return n.input(0);
  }
  return std::nullopt;
}

// An operator `op` of h with one operand in either order (`inner_op`: a * h or h * a; a sum h + b
// or b + h), which is one operand of `outer`, in either order: the inner node's other operand, and
// the outer node's.
std::optional<std::pair<Value, Value>> nested(const BinaryNode& outer, BinaryOp inner_op, const Value& h) {
  for (int side = 0; side < 2; ++side) {
    const BinaryNode* inner = binary(outer.input(side), inner_op);
    if (!inner) continue;
    bool h_first = false;
    if (std::optional<Value> other = other_than(*inner, h, &h_first)) return std::pair{*other, outer.input(1 - side)};
  }
  return std::nullopt;
}

// a * h + b in any of its written orders: (a*h)+b, b+(a*h), (h*a)+b, b+(h*a).
std::optional<AssocStep> match_affine(const BinaryNode& add, const Value& h) {
  if (auto p = nested(add, BinaryOp::Mul, h)) return AssocStep{AssocOp::Affine, p->first, p->second};
  return std::nullopt;
}

// (h + b) * a in any of its written orders: how the adjoint of an affine recurrence carries its
// cotangent (the state is the cotangent of h[t-1] without the step's own term).
std::optional<AssocStep> match_add_mul(const BinaryNode& product, const Value& h) {
  if (auto p = nested(product, BinaryOp::Add, h)) return AssocStep{AssocOp::AddMul, p->second, p->first};
  return std::nullopt;
}

std::optional<AssocStep> match_step(const Value& result, const Value& h) {
  if (result.node->kind() != NodeKind::Binary) return std::nullopt;
  const auto& n = *result.node->as<BinaryNode>();
  bool h_first = false;
  std::optional<Value> other = other_than(n, h, &h_first);
  switch (n.op()) {
    case BinaryOp::Add:
      if (other) return AssocStep{AssocOp::Add, {}, *other};
      return match_affine(n, h);
    case BinaryOp::Mul:
      if (other) return AssocStep{AssocOp::Mul, {}, *other};
      return match_add_mul(n, h);
    case BinaryOp::Max:
      if (other) return AssocStep{h_first ? AssocOp::Max : AssocOp::MaxNewFirst, {}, *other};
      return std::nullopt;
    case BinaryOp::Min:
      if (other) return AssocStep{h_first ? AssocOp::Min : AssocOp::MinNewFirst, {}, *other};
      return std::nullopt;
    case BinaryOp::Sub:
    case BinaryOp::Div:
    case BinaryOp::Mod:
    case BinaryOp::Pow:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<AssocOperand> assoc_operand(const ScanInfo& info, const Value& v, const Type& row, std::string* why) {
  AssocOperand out;
  if (v.type().dtype != row.dtype) {
    *why = "an operand of type " + v.type().str() + " is converted";
    return std::nullopt;
  }
  if (v.type().is_scalar() && !row.is_scalar()) {
    out.broadcast = true;
  } else if (!v.type().same_as(row)) {
    *why = "an operand of type " + v.type().str() + " is not provably of the state's type " + row.str();
    return std::nullopt;
  }
  if (v.node->kind() == NodeKind::Constant) return out;
  if (v.node->kind() != NodeKind::Param) {
    *why = "an operand is computed in the step (" + std::string(node_kind_name(v.node->kind())) + ")";
    return std::nullopt;
  }
  const int index = v.node->as<ParamNode>()->index();
  for (size_t s = 0; s < info.sequences.size(); ++s)
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
      if (info.body_sequence_param(int(s), int(k)) == index) {
        out.kind = AssocOperandKind::SequenceTap;
        out.sequence = int(s);
        out.tap = int(k);
        return out;
      }
  for (int p = 0; p < info.num_params; ++p)
    if (info.body_param(p) == index) {
      out.kind = AssocOperandKind::Param;
      out.param = p;
      return out;
    }
  *why = index == info.body_index_param() ? "an operand is the loop index" : "an operand is a state";
  return std::nullopt;
}

std::optional<AssocStep> match_assoc_step(const ScanInfo& info, const Graph& body, int s, std::string* why) {
  const ScanState& state = info.states[size_t(s)];
  if (state.lags != std::vector<int64_t>{1}) {
    *why = "it reads more than one step back";
    return std::nullopt;
  }
  const Value& h = body.params[size_t(info.body_state_param(s, 0))];
  const Value& result = body.results[size_t(s)];
  std::optional<AssocStep> step = match_step(result, h);
  if (!step) {
    *why = "its step is not an associative operator of its previous value (a * h + b, h + b, h * b, max, min)";
    return std::nullopt;
  }
  if (!result.type().same_as(h.type())) {
    *why = "its step changes its type";
    return std::nullopt;
  }
  if (step->a && !assoc_operand(info, step->a, h.type(), why)) return std::nullopt;
  if (!assoc_operand(info, step->b, h.type(), why)) return std::nullopt;
  if (h.type().dtype == DType::Bool) {
    *why = "it is a bool";
    return std::nullopt;
  }
  return step;
}

bool assoc_is_exact(AssocOp op, DType d) {
  switch (op) {
    case AssocOp::Affine:
    case AssocOp::AddMul:
    case AssocOp::Add:
    case AssocOp::Mul:
      return is_int(d);
    case AssocOp::Max:
    case AssocOp::Min:
    case AssocOp::MaxNewFirst:
    case AssocOp::MinNewFirst:
      return true;
  }
  return false;
}

}  // namespace scangen::ir
