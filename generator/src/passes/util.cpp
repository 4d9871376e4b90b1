#include "passes/util.h"

#include <algorithm>
#include <sstream>

#include "ir/checks.h"
#include "ir/mutator.h"
#include "support/check.h"

namespace scangen::passes {
namespace {

class BodyRewriter : public ir::Mutator {
 public:
  BodyRewriter(const GraphRewrite* graphs, const ScanRewrite* scans) : graphs_(graphs), scans_(scans) {}

  ir::Graph rewrite(const ir::Graph& g) {
    ir::Graph inner = mutate(g);
    return graphs_ ? (*graphs_)(inner) : inner;
  }

 protected:
  std::vector<ir::Value> visit_Scan(const ir::ScanNode& n, std::vector<ir::Value> inputs) override {
    BodyRewriter inner(graphs_, scans_);
    ir::Graph body = inner.rewrite(n.body());
    ir::NodeRef node;
    if (body.results == n.body().results && body.params == n.body().params) {
      node = keep_or_rebuild(n, inputs).front().node;
    } else {
      node = builder.rebuild_scan(n, std::move(inputs), n.info(), std::make_shared<const ir::Graph>(std::move(body)));
    }
    const auto* scan = node->as<ir::ScanNode>();
    if (scans_) {
      if (auto replaced = (*scans_)(*scan, builder)) return *replaced;
    }
    std::vector<ir::Value> outs;
    for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(node->output(i));
    return outs;
  }

 private:
  const GraphRewrite* graphs_;
  const ScanRewrite* scans_;
};

ir::Program rewrite_all(const ir::Program& program, const GraphRewrite* graphs, const ScanRewrite* scans) {
  ir::Program out = program;
  for (ir::Function& f : out.functions) {
    BodyRewriter r(graphs, scans);
    f.graph = r.rewrite(f.graph);
  }
  return out;
}

}  // namespace

ir::Program rewrite_graphs(const ir::Program& program, const GraphRewrite& rewrite) {
  return rewrite_all(program, &rewrite, nullptr);
}

ir::Program rewrite_scans(const ir::Program& program, const ScanRewrite& rewrite) {
  return rewrite_all(program, nullptr, &rewrite);
}

std::string structural_key(const ir::Node& n) {
  std::ostringstream os;
  os << ir::node_kind_name(n.kind()) << "|";
  for (const ir::Type& t : n.output_types()) os << t.str() << ",";
  os << "|";
  for (const ir::Value& in : n.inputs()) os << static_cast<const void*>(in.node.get()) << ":" << in.index << ",";
  os << "|";
  switch (n.kind()) {
    case ir::NodeKind::Param: os << static_cast<const void*>(&n); break;  // params are never merged
    case ir::NodeKind::Constant: {
      const ir::Scalar& s = n.as<ir::ConstantNode>()->value();
      os << int(s.dtype) << ":" << s.i << ":";
      os.write(reinterpret_cast<const char*>(&s.f), sizeof s.f);
      break;
    }
    case ir::NodeKind::DimSize: os << n.as<ir::DimSizeNode>()->axis(); break;
    case ir::NodeKind::Unary: os << int(n.as<ir::UnaryNode>()->op()); break;
    case ir::NodeKind::Binary: os << int(n.as<ir::BinaryNode>()->op()); break;
    case ir::NodeKind::Reduce: {
      const auto* r = n.as<ir::ReduceNode>();
      os << int(r->op()) << ":" << (r->axis() ? *r->axis() : -1);
      break;
    }
    case ir::NodeKind::Index:
      for (const ir::IndexSpec& s : n.as<ir::IndexNode>()->specs()) os << int(s.kind) << s.has_lo << s.has_hi << ";";
      break;
    case ir::NodeKind::Update: {
      const auto* u = n.as<ir::UpdateNode>();
      os << u->accumulate() << ":";
      for (const ir::IndexSpec& s : u->specs()) os << int(s.kind) << s.has_lo << s.has_hi << ";";
      break;
    }
    case ir::NodeKind::CheckShape: {
      const auto* c = n.as<ir::CheckShapeNode>();
      os << c->what() << ":";
      for (const ir::DimCheck& d : c->checks()) os << int(d.kind) << "," << d.value << "," << d.symbol << ";";
      break;
    }
    case ir::NodeKind::Call: {
      // The same function of the same import: pure, so equal arguments give equal results.
      const auto* c = n.as<ir::CallNode>();
      os << static_cast<const void*>(c->import().get()) << ":" << c->function_index();
      break;
    }
    case ir::NodeKind::Scan: {
      // Two scans are the same only with the same body (shared, not equal-looking) and options.
      const auto* s = n.as<ir::ScanNode>();
      os << static_cast<const void*>(s->body_ptr().get()) << ":" << s->info().reverse << s->info().has_until;
      break;
    }
    case ir::NodeKind::Reshape: os << n.as<ir::ReshapeNode>()->checked(); break;
    // Two checks of one L bound by other values say different things when they fail.
    case ir::NodeKind::CheckLengths: os << int(n.as<ir::CheckLengthsNode>()->bound()); break;
    case ir::NodeKind::Transpose:
      for (int p : n.as<ir::TransposeNode>()->perm()) os << p << ",";
      break;
    case ir::NodeKind::ArgReduce: {
      const auto* r = n.as<ir::ArgReduceNode>();
      os << int(r->op()) << ":" << (r->axis() ? *r->axis() : -1);
      break;
    }
    // Nothing but the kind, the types and the inputs.
    case ir::NodeKind::Arange:
    case ir::NodeKind::Fill:
    case ir::NodeKind::Select:
    case ir::NodeKind::Cast:
    case ir::NodeKind::MatMul:
    case ir::NodeKind::StopGradient:
    case ir::NodeKind::CheckOffsets:
    case ir::NodeKind::Gather:
    case ir::NodeKind::ScatterAdd:
    case ir::NodeKind::TopK: break;
  }
  return os.str();
}

std::shared_ptr<const ir::Graph> rebuild_body(const std::vector<ir::Value>& new_params,
                                              const std::vector<ir::Value>& replacements,
                                              const std::vector<ir::Value>& old_results) {
  auto body = std::make_shared<ir::Graph>();
  body->params = new_params;
  body->results = ir::substitute_params(replacements, old_results);
  return body;
}

namespace {

// Every pair of aligned dimensions is provably equal or 1: broadcasting cannot fail.
bool broadcast_cannot_fail(const std::vector<ir::Dim>& a, const std::vector<ir::Dim>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const ir::Dim& x = a[a.size() - 1 - i];
    const ir::Dim& y = b[b.size() - 1 - i];
    if (!(x.same_as(y) || x.is_const(1) || y.is_const(1))) return false;
  }
  return true;
}

}  // namespace

namespace {

class ValueReplacer : public ir::Mutator {
 public:
  explicit ValueReplacer(const std::unordered_map<ir::Value, ir::Value, ir::ValueHash>& r) : r_(r) {}

 protected:
#define IR_NODE(kind, name, checks)                                                                       \
  std::vector<ir::Value> visit_##kind(const ir::kind##Node& n, std::vector<ir::Value> inputs) override { \
    return replace(n, std::move(inputs));                                                                  \
  }
#include "ir/nodes.def"
#undef IR_NODE

 private:
  std::vector<ir::Value> replace(const ir::Node& n, std::vector<ir::Value> inputs) {
    std::vector<ir::Value> outs = keep_or_rebuild(n, std::move(inputs));
    for (int i = 0; i < n.num_outputs(); ++i) {
      auto it = r_.find(n.output(i));
      if (it != r_.end()) outs[size_t(i)] = it->second;
    }
    return outs;
  }
  const std::unordered_map<ir::Value, ir::Value, ir::ValueHash>& r_;
};

}  // namespace

std::vector<ir::Value> replace_values(const std::unordered_map<ir::Value, ir::Value, ir::ValueHash>& replacements,
                                      const std::vector<ir::Value>& results) {
  ValueReplacer r(replacements);
  std::vector<ir::Value> out;
  for (const ir::Value& v : results) out.push_back(r.mutate(v));
  return out;
}

namespace {

// Whether the checks n makes (ir/checks.h) provably pass, from its operands' static types and
// constants; false where that cannot be known before the program runs.
bool checks_always_pass(const ir::Node& n) {
  auto broadcasts = [&](int first) {
    for (int i = first; i < n.num_inputs(); ++i)
      for (int j = i + 1; j < n.num_inputs(); ++j)
        if (!broadcast_cannot_fail(n.input(i).type().shape, n.input(j).type().shape)) return false;
    return true;
  };
  switch (n.kind()) {
    case ir::NodeKind::Param:
    case ir::NodeKind::Constant:
    case ir::NodeKind::DimSize:
    case ir::NodeKind::Cast:
    case ir::NodeKind::Unary:
    case ir::NodeKind::StopGradient:
    case ir::NodeKind::Transpose: return true;  // no checks
    // Integer division, remainder and power check their right operand's elements.
    case ir::NodeKind::Binary: return !ir::checks_elements(n) && broadcasts(0);
    case ir::NodeKind::Select:
    case ir::NodeKind::Call: return broadcasts(0);  // imported functions are pure scalar functions
    case ir::NodeKind::Fill:
      for (int i = 1; i < n.num_inputs(); ++i)
        if (!ir::never_negative(n.input(i))) return false;
      return true;
    // stop - start overflows only when start < 0.
    case ir::NodeKind::Arange: return ir::never_negative(n.input(0));
    case ir::NodeKind::MatMul: return n.input(0).type().shape.back().same_as(n.input(1).type().shape.front());
    case ir::NodeKind::Reduce: {
      // max/min of nothing is an error: only a provably non-empty input cannot fail.
      const auto* r = n.as<ir::ReduceNode>();
      const ir::Type& x = n.input(0).type();
      if (r->axis()) return x.shape[size_t(*r->axis())].const_value().value_or(0) > 0;
      return std::all_of(x.shape.begin(), x.shape.end(), [](const ir::Dim& d) { return d.const_value().value_or(0) > 0; });
    }
    case ir::NodeKind::Index: {
      // Slices clamp; a scalar index is in range when it is a constant within a dimension of
      // known size.
      const auto* idx = n.as<ir::IndexNode>();
      int op = 1;
      for (size_t d = 0; d < idx->specs().size(); ++d) {
        const ir::IndexSpec& s = idx->specs()[d];
        if (s.kind == ir::IndexSpec::Kind::Scalar) {
          auto c = ir::constant_value(n.input(op));
          auto size = n.input(0).type().shape[d].const_value();
          if (!c || !size || c->i >= *size || c->i < -*size) return false;
        }
        op += s.num_operands();
      }
      return true;
    }
    // Run-time checks: a reshape's count, declared dims, the value's shape in set/inc, indices
    // in range, k within the axis, a non-empty input.
    case ir::NodeKind::Reshape:
    case ir::NodeKind::CheckShape:
    case ir::NodeKind::CheckLengths:
    case ir::NodeKind::CheckOffsets:
    case ir::NodeKind::Update:
    case ir::NodeKind::Gather:
    case ir::NodeKind::ScatterAdd:
    case ir::NodeKind::ArgReduce:
    case ir::NodeKind::TopK: return false;
    case ir::NodeKind::Scan: return !scan_can_fail(*n.as<ir::ScanNode>());
  }
  return false;
}

}  // namespace

bool can_fail(const ir::Node& n) {
  return (ir::checks_shape(n) || ir::checks_elements(n)) && !checks_always_pass(n);
}

namespace {

// The number of steps `steps` gives, as a static dimension, when it is provably >= 0.
std::optional<ir::Dim> valid_steps(const ir::ScanNode& n) {
  const ir::Value& steps = n.input(n.info().steps_input());
  if (auto c = ir::constant_value(steps); c && c->i >= 0) return ir::Dim::constant(c->i);
  if (const auto* d = steps.node->as<ir::DimSizeNode>()) return d->input(0).type().shape[size_t(d->axis())];
  return std::nullopt;
}

}  // namespace

bool sequences_may_be_too_short(const ir::ScanNode& n) {
  const ir::ScanInfo& info = n.info();
  if (!info.has_steps || info.sequences.empty()) return false;
  std::optional<ir::Dim> count = valid_steps(n);
  if (!count) return true;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ir::Dim& length = n.input(info.sequence_input(int(s))).type().shape[0];
    int64_t span = info.sequences[s].span();
    bool long_enough = length.plus(-span).same_as(*count) ||
                       (length.is_const() && count->is_const() && *length.const_value() >= *count->const_value() + span);
    if (!long_enough) return true;
  }
  return false;
}

bool value_can_fail(const ir::Value& v) {
  for (const ir::Node* node : ir::topological_order(ir::Graph{{}, {v}}))
    if (can_fail(*node)) return true;
  return false;
}

bool step_can_fail(const ir::ScanNode& n) {
  for (const ir::Node* node : ir::topological_order(n.body()))
    if (can_fail(*node)) return true;
  return false;
}

bool scan_can_fail(const ir::ScanNode& n) {
  if (n.info().has_steps && !valid_steps(n)) return true;  // `steps` must be >= 0
  return sequences_may_be_too_short(n) || step_can_fail(n);
}

std::optional<int64_t> constant_step_count(const ir::ScanNode& n) {
  const ir::ScanInfo& info = n.info();
  std::optional<int64_t> count;
  if (info.has_steps) {
    auto c = ir::constant_value(n.input(info.steps_input()));
    if (!c || c->i < 0) return std::nullopt;
    count = c->i;
  }
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ir::Dim& length = n.input(info.sequence_input(int(s))).type().shape[0];
    if (!length.is_const()) return std::nullopt;
    int64_t allowed = std::max<int64_t>(*length.const_value() - info.sequences[s].span(), 0);
    if (info.has_steps) {
      if (allowed < *count) return std::nullopt;  // an error: too short
    } else {
      count = count ? std::min(*count, allowed) : allowed;
    }
  }
  return count;
}

}  // namespace scangen::passes
