// Helpers shared by the passes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/builder.h"
#include "ir/ir.h"

namespace scangen::passes {

// Applies `rewrite` to every graph of the program, innermost scan bodies first: a scan whose body
// changes is rebuilt around its new body (with the same params), then the enclosing graph is
// rewritten in turn.
using GraphRewrite = std::function<ir::Graph(const ir::Graph&)>;
ir::Program rewrite_graphs(const ir::Program& program, const GraphRewrite& rewrite);

// Calls `rewrite` on every scan node, innermost first (its body already rewritten): it returns
// the values that replace the node's outputs, or nothing to keep the node.
using ScanRewrite =
    std::function<std::optional<std::vector<ir::Value>>(const ir::ScanNode& scan, ir::Builder& builder)>;
ir::Program rewrite_scans(const ir::Program& program, const ScanRewrite& rewrite);

// A key that is equal for two nodes computing the same thing from the same operands.
std::string structural_key(const ir::Node& n);

// A scan's body with new params: param i of the old body becomes replacements[i] (a value of the
// new body), results as given (values of the old body) are rebuilt over the new params.
std::shared_ptr<const ir::Graph> rebuild_body(const std::vector<ir::Value>& new_params,
                                              const std::vector<ir::Value>& replacements,
                                              const std::vector<ir::Value>& old_results);

// `results` rebuilt with every value of `replacements` replaced (the replacements may be values of
// another graph, e.g. new params).
std::vector<ir::Value> replace_values(const std::unordered_map<ir::Value, ir::Value, ir::ValueHash>& replacements,
                                      const std::vector<ir::Value>& results);

// `results` with constants folded and common subexpressions merged (the rewrites of `general`):
// two values computing the same thing come out as the same value.
std::vector<ir::Value> simplify_values(const std::vector<ir::Value>& results);

// Whether evaluating the node can raise a run-time error for some argument values (an index out
// of range, an integer division by zero, shapes that do not broadcast, ...). Rewrites that move a
// computation out of a loop (where it would run even for zero steps) move only nodes that cannot.
bool can_fail(const ir::Node& n);
// Whether computing v (everything it depends on included) can fail.
bool value_can_fail(const ir::Value& v);
// For a scan: whether its number of steps can be invalid or any step computation can fail.
bool scan_can_fail(const ir::ScanNode& n);
// With `steps`: whether a sequence may be too short for it (an error of the scan).
bool sequences_may_be_too_short(const ir::ScanNode& n);
// Whether a computation of the step can fail (at some step, for some arguments).
bool step_can_fail(const ir::ScanNode& n);
// The number of steps a scan takes (before `until` stops it) whatever the arguments, when it is a
// constant and cannot be invalid: a constant `steps` >= 0 with sequences of constant lengths long
// enough, or sequences of constant lengths; nullopt otherwise.
std::optional<int64_t> constant_step_count(const ir::ScanNode& n);

}  // namespace scangen::passes
