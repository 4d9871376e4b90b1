// Associative steps of scans: a state whose step is one associative operator (ops.def, ASSOC_OP)
// of its previous value and operands that do not depend on any state, such as
// `h[t] = a * h[t-1] + u[t]` or `m[t] = max(m[t-1], x[t])`. The rewrite parallel-scan marks such
// scans (ScanInfo::assoc), the verifier checks the mark, and the lowering reads the operands from
// here, so all three agree on one definition.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"

namespace scangen::ir {

struct AssocStep {
  AssocOp op = AssocOp::Add;
  Value a;  // the multiplier of Affine and AddMul (unset otherwise)
  Value b;  // the operand combined with the previous value
};

// What a step operand of an associative scan is: a sequence tap, a scan parameter or a constant
// of the step's graph, whose type is the state's row type or a scalar of its dtype.
enum class AssocOperandKind { SequenceTap, Param, Constant };
struct AssocOperand {
  AssocOperandKind kind = AssocOperandKind::Constant;
  int sequence = -1, tap = 0;  // SequenceTap: which sequence, which of its taps (an index into taps)
  int param = -1;              // Param: which scan parameter
  bool broadcast = false;      // a scalar combined with every element of a tensor state
};

// `v` as a step operand of a state of type `row`, or nullopt (with the reason in *why).
std::optional<AssocOperand> assoc_operand(const ScanInfo& info, const Value& v, const Type& row, std::string* why);

// The associative step of state `s` of a scan, or nullopt with the reason in *why (for
// `scangen ir --stats`): the state has one lag (t-1), its step value is op(previous, operands)
// in one of the forms of ops.def (`b + a * h`, `h * a + b`, `max(b, h)` ...), each operand an
// assoc_operand, and the types are the state's.
std::optional<AssocStep> match_assoc_step(const ScanInfo& info, const Graph& body, int s, std::string* why);

// Whether the operator may run in another association order without the user's permission: it
// gives the same bits in every order (integer arithmetic wraps, min and max pick an element).
bool assoc_is_exact(AssocOp op, DType d);

}  // namespace scangen::ir
