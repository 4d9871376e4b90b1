// Which nodes can fail at run time: the checks column of nodes.def, refined by operator. The
// rewrites (passes/util.h: can_fail) move only nodes whose checks provably pass, and the lowering
// computes a value for its errors (len(x) of an x that may fail) only when its elements are checked.
#pragma once

#include "ir/ir.h"

namespace scangen::ir {

// The checks column of nodes.def.
enum class NodeChecks { None, Shape, Elements, Both };
NodeChecks node_checks(NodeKind k);

// Whether n checks its operands' shapes and sizes (made where its shape is computed): the kinds
// of the column; of reshapes, only the language's (rewrites make reshapes that keep the count).
bool checks_shape(const Node& n);
// Whether n checks what it meets while it computes its value: the kinds of the column; of binary
// operations, integer /, % and ** (their broadcasting is a shape check); of reductions, max and
// min (of nothing); of subscripts, those with a scalar index.
bool checks_elements(const Node& n);

// A size that cannot be negative: another value's dimension, or a constant >= 0.
bool never_negative(const Value& size);

}  // namespace scangen::ir
