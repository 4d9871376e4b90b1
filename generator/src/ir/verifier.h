// Checks the invariants of the IR: every node's operands and type follow its kind's rules, every
// graph uses only its own parameters, and every scan body matches its ScanInfo. A violation is a
// scangen bug; verify() throws InternalError naming the node. Run after every pass in tests and
// with --verify-each.
#pragma once

#include "ir/ir.h"

namespace scangen::ir {

void verify(const Graph& g);
void verify(const Function& f);
void verify(const Program& p);

}  // namespace scangen::ir
