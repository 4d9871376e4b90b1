#include "ir/ir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_set>

#include "support/check.h"

namespace scangen::ir {

const char* node_kind_name(NodeKind k) {
  switch (k) {
#define IR_NODE(kind, name, checks) \
  case NodeKind::kind: return name;
#include "ir/nodes.def"
#undef IR_NODE
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define UNARY_OP(op, name, ints) \
  case UnaryOp::op: return name;
#include "ir/ops.def"
#undef UNARY_OP
  }
  return "?";
}

bool unary_op_allows_int(UnaryOp op) {
  switch (op) {
#define UNARY_OP(op, name, ints) \
  case UnaryOp::op: return ints;
#include "ir/ops.def"
#undef UNARY_OP
  }
  return false;
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define BINARY_OP(op, name, cls) \
  case BinaryOp::op: return name;
#include "ir/ops.def"
#undef BINARY_OP
  }
  return "?";
}

BinaryClass binary_op_class(BinaryOp op) {
  switch (op) {
#define BINARY_OP(op, name, cls) \
  case BinaryOp::op: return BinaryClass::cls;
#include "ir/ops.def"
#undef BINARY_OP
  }
  return BinaryClass::Arith;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
#define REDUCE_OP(op, name) \
  case ReduceOp::op: return name;
#include "ir/ops.def"
#undef REDUCE_OP
  }
  return "?";
}

const char* assoc_op_name(AssocOp op) {
  switch (op) {
#define ASSOC_OP(op, name, helper) \
  case AssocOp::op: return name;
#include "ir/ops.def"
#undef ASSOC_OP
  }
  return "?";
}

const char* assoc_op_helper(AssocOp op) {
  switch (op) {
#define ASSOC_OP(op, name, helper) \
  case AssocOp::op: return helper;
#include "ir/ops.def"
#undef ASSOC_OP
  }
  return "?";
}

Scalar Scalar::of_int(DType d, int64_t v) {
  SCANGEN_CHECK(is_int(d), "integer constant of a non-integer type");
  Scalar s;
  s.dtype = d;
  s.i = v;
  return s;
}

Scalar Scalar::of_float(DType d, double v) {
  SCANGEN_CHECK(is_float(d), "float constant of a non-float type");
  Scalar s;
  s.dtype = d;
  s.f = d == DType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
  return s;
}

Scalar Scalar::zero(DType d) {
  if (d == DType::Bool) return of_bool(false);
  return is_float(d) ? of_float(d, 0) : of_int(d, 0);
}

Scalar Scalar::of_bool(bool b) {
  Scalar s;
  s.dtype = DType::Bool;
  s.i = b ? 1 : 0;
  return s;
}

bool Scalar::operator==(const Scalar& o) const {
  if (dtype != o.dtype) return false;
  if (is_float(dtype)) return std::memcmp(&f, &o.f, sizeof f) == 0;
  return i == o.i;
}

std::string Scalar::str() const {
  switch (dtype) {
    case DType::Bool: return i ? "true" : "false";
    case DType::I32:
    case DType::I64: return std::to_string(i);
    case DType::F32:
    case DType::F64: {
      if (std::isnan(f)) return "nan";
      if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
      char buf[40];
      std::snprintf(buf, sizeof buf, dtype == DType::F32 ? "%.9g" : "%.17g", f);
      std::string s = buf;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "?";
}

int ScanInfo::body_sequence_param(int seq, int tap) const {
  int p = 1;
  for (int s = 0; s < seq; ++s) p += static_cast<int>(sequences[size_t(s)].taps.size());
  return p + tap;
}

int ScanInfo::body_state_param(int state, int lag) const {
  int p = body_sequence_param(static_cast<int>(sequences.size()), 0);
  for (int s = 0; s < state; ++s) p += static_cast<int>(states[size_t(s)].lags.size());
  return p + lag;
}

int ScanInfo::body_param(int i) const {
  return body_state_param(static_cast<int>(states.size()), 0) + i;
}

std::string ScanSequence::taps_text() const {
  std::string text;
  for (int64_t k : taps_in_messages()) text += (text.empty() ? "" : ", ") + std::to_string(k);
  return text;
}

std::string ScanInfo::flags_text() const {
  std::string s;
  if (reverse) s += " reverse";
  if (has_until) s += " until";
  if (truncate_gradient != -1) s += " truncate_gradient=" + std::to_string(truncate_gradient);
  if (checkpoint != 0) s += " checkpoint=" + std::to_string(checkpoint);
  if (parallel) s += " parallel";
  if (assoc) s += std::string(" assoc=") + assoc_op_name(*assoc);
  return s;
}

bool ScanInfo::operator==(const ScanInfo& o) const {
  if (has_steps != o.has_steps || reverse != o.reverse || has_until != o.has_until ||
      truncate_gradient != o.truncate_gradient || checkpoint != o.checkpoint || index_name != o.index_name ||
      parallel != o.parallel || assoc != o.assoc ||
      outputs != o.outputs || num_params != o.num_params || windows != o.windows ||
      sequences.size() != o.sequences.size() || states.size() != o.states.size())
    return false;
  for (size_t i = 0; i < sequences.size(); ++i)
    if (sequences[i].taps != o.sequences[i].taps || sequences[i].label != o.sequences[i].label ||
        sequences[i].taps_in_messages() != o.sequences[i].taps_in_messages())
      return false;
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].name != o.states[i].name || states[i].lags != o.states[i].lags ||
        states[i].init_in_place != o.states[i].init_in_place)
      return false;
  return true;
}

std::string Function::result_name(size_t i) const {
  if (i < results.size() && !results[i].name.empty()) return results[i].name;
  return "out" + std::to_string(i);
}

std::string Function::signature() const {
  std::string s = "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += args[i].name + ": " + args[i].type.str();
  }
  s += ") -> ";
  bool paren = tuple_result || (results.size() == 1 && !results[0].name.empty());
  if (paren) s += "(";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i) s += ", ";
    if (!results[i].name.empty()) s += results[i].name + ": ";
    s += results[i].type.str();
  }
  if (paren) s += ")";
  return s;
}

const Function* Program::find(const std::string& name) const {
  for (const Function& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<const Node*> topological_order(const Graph& g) {
  std::vector<const Node*> order;
  std::unordered_set<const Node*> visited;
  // Iterative post-order DFS so that long chains cannot overflow the stack.
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const Value& r : g.results) {
    if (!r.node || visited.count(r.node.get())) continue;
    visited.insert(r.node.get());
    stack.push_back({r.node.get(), 0});
    while (!stack.empty()) {
      auto& [node, next_input] = stack.back();
      if (next_input < node->inputs().size()) {
        const Node* in = node->inputs()[next_input++].node.get();
        if (in && visited.insert(in).second) stack.push_back({in, 0});
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace scangen::ir

namespace scangen::ir {
namespace {

void collect_imports(const Graph& g, std::vector<ImportRef>& out) {
  for (const Node* n : topological_order(g)) {
    if (const auto* s = n->as<ScanNode>()) collect_imports(s->body(), out);
    if (const auto* call = n->as<CallNode>())
      if (std::find(out.begin(), out.end(), call->import()) == out.end()) out.push_back(call->import());
  }
}

void collect_calls(const Graph& g, const Program& p, std::set<std::pair<int, int>>& used) {
  for (const Node* n : topological_order(g)) {
    if (const auto* s = n->as<ScanNode>()) collect_calls(s->body(), p, used);
    const auto* call = n->as<CallNode>();
    if (!call) continue;
    for (size_t i = 0; i < p.imports.size(); ++i)
      if (p.imports[i] == call->import()) used.insert({static_cast<int>(i), call->function_index()});
  }
}

}  // namespace

std::vector<ImportRef> imports_to_include(const Program& p) {
  std::vector<ImportRef> out = p.imports;
  for (const Function& f : p.functions) collect_imports(f.graph, out);
  return out;
}

std::vector<std::pair<int, int>> used_imported_functions(const Program& p) {
  std::set<std::pair<int, int>> used;
  for (const Function& f : p.functions) collect_calls(f.graph, p, used);
  return {used.begin(), used.end()};
}

RuntimeErrorId CheckLengthsNode::error() const {
  switch (bound_) {
    case LengthsBound::ScanSteps: return RuntimeErrorId::lengths_out_of_range;
    case LengthsBound::Rows: return RuntimeErrorId::reverse_sequence_length;
  }
  return RuntimeErrorId::lengths_out_of_range;
}

}  // namespace scangen::ir
