// Dispatch on node kinds, generated from nodes.def. A class deriving from Visitor<R> must handle
// every kind (the methods are pure), so a new kind cannot be forgotten.
#pragma once

#include "ir/ir.h"
#include "support/check.h"

namespace scangen::ir {

template <class R> class Visitor {
 public:
  virtual ~Visitor() = default;

  R visit(const Node& n) {
    switch (n.kind()) {
#define IR_NODE(kind, name, checks) \
  case NodeKind::kind: return visit_##kind(static_cast<const kind##Node&>(n));
#include "ir/nodes.def"
#undef IR_NODE
    }
    SCANGEN_UNREACHABLE("unknown node kind");
  }

 protected:
#define IR_NODE(kind, name, checks) virtual R visit_##kind(const kind##Node& n) = 0;
#include "ir/nodes.def"
#undef IR_NODE
};

}  // namespace scangen::ir
