#include "ir/analysis.h"

#include <algorithm>

#include "ir/shape_rules.h"
#include "support/check.h"

namespace scangen::ir {

namespace {

std::vector<bool> none_vary(const Type& t) { return std::vector<bool>(size_t(t.rank()), false); }

bool any(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }

// A dimension the type knows (a constant or a signature symbol) is the same at every step.
std::vector<bool> unless_static(std::vector<bool> vary, const Type& t) {
  for (size_t d = 0; d < vary.size() && d < t.shape.size(); ++d)
    if (t.shape[d].kind() != Dim::Kind::Unknown) vary[d] = false;
  return vary;
}

}  // namespace

StepVariance::StepVariance(const ScanNode& scan) {
  const ScanInfo& info = scan.info();
  param_varies_.assign(size_t(info.num_body_params()), true);
  for (int p = 0; p < info.num_params; ++p) param_varies_[size_t(info.body_param(p))] = false;
  for (const Value& p : scan.body().params) param_dims_vary_.push_back(none_vary(p.type()));
}

StepVariance::StepVariance(const Graph& body, std::vector<bool> param_varies,
                           std::vector<std::vector<bool>> param_dims_vary)
    : param_varies_(std::move(param_varies)), param_dims_vary_(std::move(param_dims_vary)) {
  SCANGEN_CHECK(param_varies_.size() == body.params.size() && param_dims_vary_.size() == body.params.size(),
                "variance of every param");
}

bool StepVariance::value_varies(const Value& v) {
  const Node* n = v.node.get();
  if (const auto* p = n->as<ParamNode>()) return param_varies_.at(size_t(p->index()));
  auto it = value_memo_.find(n);
  if (it != value_memo_.end()) return it->second;
  bool varies = false;
  if (const auto* d = n->as<DimSizeNode>()) {
    // A size depends only on its operand's shape (len(x[t-1]) of a state is its init's).
    varies = dims_vary(d->input(0)).at(size_t(d->axis()));
  } else {
    for (const Value& in : n->inputs()) varies = varies || value_varies(in);
  }
  value_memo_.emplace(n, varies);
  return varies;
}

const std::vector<bool>& StepVariance::dims_vary(const Value& v) {
  const Node* n = v.node.get();
  if (const auto* p = n->as<ParamNode>()) return param_dims_vary_.at(size_t(p->index()));
  auto it = dims_memo_.find(n);
  if (it == dims_memo_.end()) {
    std::vector<std::vector<bool>> vary = node_dims_vary(*n);
    SCANGEN_CHECK(vary.size() == size_t(n->num_outputs()), "variance of every output");
    for (size_t i = 0; i < vary.size(); ++i) {
      SCANGEN_CHECK(vary[i].size() == size_t(n->output_types()[i].rank()), "variance of every dimension");
      vary[i] = unless_static(std::move(vary[i]), n->output_types()[i]);
    }
    it = dims_memo_.emplace(n, std::move(vary)).first;
  }
  return it->second.at(size_t(v.index));
}

bool StepVariance::shape_varies(const Value& v) { return any(dims_vary(v)); }

std::vector<std::vector<bool>> StepVariance::node_dims_vary(const Node& n) {
  switch (n.kind()) {
    case NodeKind::Param: SCANGEN_UNREACHABLE("param dims come from the param");
    case NodeKind::Constant:
    case NodeKind::DimSize: return {{}};
    case NodeKind::Arange: return {{value_varies(n.input(0)) || value_varies(n.input(1))}};
    case NodeKind::Fill:
    case NodeKind::Reshape: {
      // Input 0 is the fill value or the reshaped tensor; the others are the sizes.
      std::vector<bool> vary;
      for (int i = 1; i < n.num_inputs(); ++i) vary.push_back(value_varies(n.input(i)));
      return {vary};
    }
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Update:
    case NodeKind::CheckShape:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::StopGradient: return {dims_vary(n.input(0))};
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Call: return {broadcast_dims_vary(n)};
    case NodeKind::Reduce:
    case NodeKind::ArgReduce: return {without_reduced_axis(n, dims_vary(n.input(0)))};
    case NodeKind::MatMul: {
      // [m, k] @ [k, n]: the result keeps a's rows and b's columns (vectors lose theirs).
      std::vector<bool> a = dims_vary(n.input(0)), b = dims_vary(n.input(1)), vary;
      if (a.size() == 2) vary.push_back(a[0]);
      if (b.size() == 2) vary.push_back(b[1]);
      return {vary};
    }
    case NodeKind::Index: return {index_dims_vary(n)};
    case NodeKind::Transpose: {
      std::vector<bool> x = dims_vary(n.input(0)), vary;
      for (int p : n.as<TransposeNode>()->perm()) vary.push_back(x[size_t(p)]);
      return {vary};
    }
    case NodeKind::Gather: {
      // idx's dimensions, then x's row dimensions.
      std::vector<bool> vary = dims_vary(n.input(1)), x = dims_vary(n.input(0));
      vary.insert(vary.end(), x.begin() + 1, x.end());
      return {vary};
    }
    case NodeKind::ScatterAdd: return {dims_vary(n.input(0))};
    case NodeKind::TopK: {
      std::vector<bool> vary = dims_vary(n.input(0));
      vary.back() = value_varies(n.input(1));
      return {vary};
    }
    case NodeKind::Scan: return scan_dims_vary(*n.as<ScanNode>());
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

// NumPy broadcasting: an output dimension varies when a dimension it may come from does (a
// dimension that is statically 1 never decides it).
std::vector<bool> StepVariance::broadcast_dims_vary(const Node& n) {
  const size_t rank = size_t(n.output_types()[0].rank());
  std::vector<bool> vary(rank, false);
  for (const Value& in : n.inputs()) {
    const std::vector<bool>& d = dims_vary(in);
    const std::vector<Dim>& shape = in.type().shape;
    for (size_t j = 0; j < d.size(); ++j)
      if (d[j] && !shape[j].is_const(1)) vary[rank - d.size() + j] = true;
  }
  return vary;
}

// A scalar index drops its dimension; a slice keeps a length that varies with the dimension or
// with its bounds; dimensions past the indices are kept.
std::vector<bool> StepVariance::index_dims_vary(const Node& n) {
  const auto* idx = n.as<IndexNode>();
  const std::vector<bool>& x = dims_vary(n.input(0));
  std::vector<bool> vary;
  int op = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i >= idx->specs().size()) {
      vary.push_back(x[i]);
      continue;
    }
    const IndexSpec& s = idx->specs()[i];
    bool bounds = false;
    for (int k = 0; k < s.num_operands(); ++k) bounds = bounds || value_varies(n.input(op + k));
    op += s.num_operands();
    if (s.kind == IndexSpec::Kind::Slice) vary.push_back(x[i] || bounds);
  }
  return vary;
}

// A nested scan: its number of steps, then its rows' dimensions from its body analyzed with what
// its inputs bring in (a row of a sequence or a state has the dimensions of its source).
std::vector<std::vector<bool>> StepVariance::scan_dims_vary(const ScanNode& n) {
  const ScanInfo& info = n.info();
  bool steps_vary = false;
  if (info.has_until) {
    for (const Value& in : n.inputs()) steps_vary = steps_vary || value_varies(in);
  } else if (info.has_steps) {
    steps_vary = value_varies(n.input(info.steps_input()));
  } else {
    for (size_t s = 0; s < info.sequences.size(); ++s)
      steps_vary = steps_vary || dims_vary(n.input(info.sequence_input(int(s)))).at(0);
  }
  const size_t num_params = size_t(info.num_body_params());
  // Inside the nested body, values that vary with its own steps or with the enclosing step count
  // as varying alike: a row shape that depends on either is not known before the enclosing loop.
  std::vector<bool> inner_values(num_params, true);
  std::vector<std::vector<bool>> inner_dims(num_params);
  auto rows_of = [](std::vector<bool> d) {
    d.erase(d.begin());
    return d;
  };
  for (size_t s = 0; s < info.sequences.size(); ++s)
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
      inner_dims[size_t(info.body_sequence_param(int(s), int(k)))] = rows_of(dims_vary(n.input(info.sequence_input(int(s)))));
  std::vector<std::vector<bool>> state_rows;
  for (size_t s = 0; s < info.states.size(); ++s) {
    std::vector<bool> init = dims_vary(n.input(info.init_input(int(s))));
    state_rows.push_back(info.states[s].init_has_rows() ? rows_of(init) : init);
    for (size_t k = 0; k < info.states[s].lags.size(); ++k)
      inner_dims[size_t(info.body_state_param(int(s), int(k)))] = state_rows.back();
  }
  for (int p = 0; p < info.num_params; ++p) {
    const Value& in = n.input(info.param_input(p));
    inner_values[size_t(info.body_param(p))] = value_varies(in);
    inner_dims[size_t(info.body_param(p))] = dims_vary(in);
  }
  StepVariance inner(n.body(), std::move(inner_values), std::move(inner_dims));
  std::vector<std::vector<bool>> out;
  for (int i = 0; i < info.num_outputs(); ++i) {
    // A state's rows have its init's shape; an output's rows its step value's.
    std::vector<bool> row = i < int(state_rows.size()) ? state_rows[size_t(i)] : inner.dims_vary(n.body().results[size_t(i)]);
    row.insert(row.begin(), steps_vary);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace scangen::ir
