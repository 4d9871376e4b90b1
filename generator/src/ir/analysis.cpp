#include "ir/analysis.h"

#include "support/check.h"

namespace scangen::ir {

StepVariance::StepVariance(const ScanNode& scan) {
  const ScanInfo& info = scan.info();
  param_varies_.assign(size_t(info.num_body_params()), true);
  for (int p = 0; p < info.num_params; ++p) param_varies_[size_t(info.body_param(p))] = false;
}

StepVariance::StepVariance(const Graph& body, std::vector<bool> param_varies) : param_varies_(std::move(param_varies)) {
  SCANGEN_CHECK(param_varies_.size() == body.params.size(), "variance of every param");
}

bool StepVariance::value_varies(const Value& v) {
  const Node* n = v.node.get();
  if (const auto* p = n->as<ParamNode>()) return param_varies_.at(size_t(p->index()));
  auto it = value_memo_.find(n);
  if (it != value_memo_.end()) return it->second;
  bool varies = false;
  if (n->kind() == NodeKind::DimSize) {
    // A size depends only on its operand's shape (len(x[t-1]) of a state is its init's).
    varies = shape_varies(n->input(0));
  } else {
    for (const Value& in : n->inputs()) varies = varies || value_varies(in);
  }
  value_memo_.emplace(n, varies);
  return varies;
}

bool StepVariance::shape_varies(const Value& v) {
  const Node* n = v.node.get();
  if (n->kind() == NodeKind::Param) return false;  // rows, states and params keep their shapes
  auto it = shape_memo_.find(n);
  if (it == shape_memo_.end()) it = shape_memo_.emplace(n, node_shape_varies(*n)).first;
  return it->second.at(size_t(v.index));
}

std::vector<bool> StepVariance::node_shape_varies(const Node& n) {
  auto any_value = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      if (value_varies(n.input(i))) return true;
    return false;
  };
  switch (n.kind()) {
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize: return {false};
    case NodeKind::Arange: return {any_value(0, 2)};
    case NodeKind::Fill: return {any_value(1, n.num_inputs())};
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Update:
    case NodeKind::CheckShape: return {shape_varies(n.input(0))};
    case NodeKind::Reshape: return {any_value(1, n.num_inputs())};
    case NodeKind::Binary:
    case NodeKind::MatMul: return {shape_varies(n.input(0)) || shape_varies(n.input(1))};
    case NodeKind::Select:
      return {shape_varies(n.input(0)) || shape_varies(n.input(1)) || shape_varies(n.input(2))};
    case NodeKind::Reduce:
      return {n.as<ReduceNode>()->axis().has_value() && shape_varies(n.input(0))};
    case NodeKind::Index: {
      const auto* idx = n.as<IndexNode>();
      bool varies = shape_varies(n.input(0));
      int op = 1;
      for (const IndexSpec& s : idx->specs()) {
        if (s.kind == IndexSpec::Kind::Slice) varies = varies || any_value(op, op + s.num_operands());
        op += s.num_operands();
      }
      return {varies};
    }
    case NodeKind::Scan: {
      const auto* scan = n.as<ScanNode>();
      const ScanInfo& info = scan->info();
      // The number of steps: from `steps`, the sequences' lengths, or (until) the whole computation.
      bool steps_vary = false;
      if (info.has_until) {
        steps_vary = any_value(0, n.num_inputs());
      } else if (info.has_steps) {
        steps_vary = value_varies(n.input(info.steps_input()));
      } else {
        for (size_t s = 0; s < info.sequences.size(); ++s)
          steps_vary = steps_vary || shape_varies(n.input(info.sequence_input(int(s))));
      }
      // The step shapes, from the nested body with its params' variance.
      std::vector<bool> inner_params(size_t(info.num_body_params()), false);
      // Inside the nested body, a param's shape varies with the outer step when its source's does;
      // its value matters for shapes only through `value_varies` of the source.
      for (size_t s = 0; s < info.sequences.size(); ++s)
        for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
          inner_params[size_t(info.body_sequence_param(int(s), int(k)))] = true;
      for (size_t s = 0; s < info.states.size(); ++s)
        for (size_t k = 0; k < info.states[s].lags.size(); ++k)
          inner_params[size_t(info.body_state_param(int(s), int(k)))] = true;
      inner_params[size_t(info.body_index_param())] = true;
      for (int p = 0; p < info.num_params; ++p)
        inner_params[size_t(info.body_param(p))] = value_varies(n.input(info.param_input(p)));
      StepVariance inner(scan->body(), inner_params);
      std::vector<bool> out;
      for (int i = 0; i < info.num_outputs(); ++i) {
        bool row = inner.shape_varies(scan->body().results[size_t(i)]);
        // A row whose shape comes from a sequence, a state or a param follows that input's shape.
        if (!row) {
          for (size_t s = 0; s < info.sequences.size(); ++s) row = row || shape_varies(n.input(info.sequence_input(int(s))));
          for (size_t s = 0; s < info.states.size(); ++s) row = row || shape_varies(n.input(info.init_input(int(s))));
          for (int p = 0; p < info.num_params; ++p) row = row || shape_varies(n.input(info.param_input(p)));
        }
        out.push_back(steps_vary || row);
      }
      return out;
    }
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

}  // namespace scangen::ir
