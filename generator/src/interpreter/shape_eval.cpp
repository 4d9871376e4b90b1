#include "interpreter/shape_eval.h"

#include <algorithm>

#include "interpreter/elements.h"
#include "ir/builder.h"
#include "ir/shape_rules.h"

namespace scangen::interp {

using namespace scangen::ir;

Shape ShapeEval::shape(const Value& v) {
  if (const auto* p = v.node->as<ParamNode>()) return param_shapes_.at(size_t(p->index()));
  auto it = shapes_.find(v.node.get());
  if (it == shapes_.end()) it = shapes_.emplace(v.node.get(), node_shapes(*v.node)).first;
  return it->second.at(size_t(v.index));
}

bool ShapeEval::has_value(const Value& v) {
  if (const auto* p = v.node->as<ParamNode>()) return param_values_.at(size_t(p->index())).has_value();
  if (const auto* d = v.node->as<DimSizeNode>()) return shape(d->input(0)).at(size_t(d->axis())) != kUnknownSize;
  auto it = has_value_.find(v.node.get());
  if (it != has_value_.end()) return it->second;
  bool known = true;
  for (const Value& in : v.node->inputs()) known = known && has_value(in);
  has_value_.emplace(v.node.get(), known);
  return known;
}

HostTensor ShapeEval::value(const Value& v) {
  SCANGEN_CHECK(has_value(v), "the shape of a scan output depends on a value that changes from step to step");
  if (const auto* p = v.node->as<ParamNode>()) return *param_values_.at(size_t(p->index()));
  if (const auto* d = v.node->as<DimSizeNode>()) return HostTensor::scalar<int64_t>(shape(d->input(0)).at(size_t(d->axis())));
  auto it = values_.find(v.node.get());
  if (it == values_.end()) {
    std::vector<HostTensor> inputs;
    for (const Value& in : v.node->inputs()) inputs.push_back(value(in));
    NodeEval e(inputs, run_);
    it = values_.emplace(v.node.get(), e.visit(*v.node)).first;
  }
  return it->second.at(size_t(v.index));
}

std::optional<int64_t> ShapeEval::size_of(const Value& v) {
  return has_value(v) ? std::optional<int64_t>(scalar_i64(value(v))) : std::nullopt;
}

int64_t ShapeEval::steps_of(const ScanNode& n) {
  const ScanInfo& info = n.info();
  // With `until`, the steps come from running the scan, possible only when nothing it reads
  // depends on the enclosing step.
  if (info.has_until) return has_value(n.output(0)) ? value(n.output(0)).dim(0) : kUnknownSize;
  if (info.has_steps) {
    // A negative `steps` is an error of the scan when it runs; as a size it is 0.
    std::optional<int64_t> steps = size_of(n.input(info.steps_input()));
    return steps ? std::max<int64_t>(*steps, 0) : kUnknownSize;
  }
  int64_t steps = 0;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    int64_t length = shape(n.input(info.sequence_input(int(s))))[0];
    if (length == kUnknownSize) return kUnknownSize;
    int64_t allowed = std::max<int64_t>(length - info.sequences[s].span(), 0);
    steps = s == 0 ? allowed : std::min(steps, allowed);
  }
  return steps;
}

ShapeEval::ScanShapes ShapeEval::scan_shapes(const ScanNode& n, bool with_steps) {
  const ScanInfo& info = n.info();
  const Graph& body = n.body();
  std::vector<Shape> shapes(body.params.size());
  std::vector<std::optional<HostTensor>> values(body.params.size());
  auto rows_of = [](Shape s) {
    s.erase(s.begin());
    return s;
  };
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    Shape row = rows_of(shape(n.input(info.sequence_input(int(s)))));
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) shapes[size_t(info.body_sequence_param(int(s), int(k)))] = row;
  }
  // A state's step shape is its init's (a step value of another shape is an error of that step);
  // an output's comes from its step value.
  std::vector<Shape> state_rows;
  for (size_t s = 0; s < info.states.size(); ++s) {
    Shape init = shape(n.input(info.init_input(int(s))));
    state_rows.push_back(info.states[s].init_has_rows() ? rows_of(init) : init);
    for (size_t k = 0; k < info.states[s].lags.size(); ++k) shapes[size_t(info.body_state_param(int(s), int(k)))] = state_rows[s];
  }
  for (int p = 0; p < info.num_params; ++p) {
    const Value& in = n.input(info.param_input(p));
    shapes[size_t(info.body_param(p))] = shape(in);
    if (has_value(in)) values[size_t(info.body_param(p))] = value(in);
  }
  ScanShapes out;
  if (with_steps) out.steps = steps_of(n);
  ShapeEval inner(std::move(shapes), std::move(values));
  for (int i = 0; i < info.num_outputs(); ++i)
    out.rows.push_back(i < int(state_rows.size()) ? state_rows[size_t(i)] : inner.shape(body.results[size_t(i)]));
  return out;
}

// NumPy broadcasting where some sizes may be unknown: a known size other than 1 decides (an
// unknown one must then be 1 or the same, else the step reports it); mismatches of known sizes
// are the program's error, as in a step.
Shape ShapeEval::partial_broadcast(const Shape& a, const Shape& b, const Loc& loc) {
  auto known = [](const Shape& s) { return std::find(s.begin(), s.end(), kUnknownSize) == s.end(); };
  if (known(a) && known(b)) return broadcast(a, b, loc);
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da == kUnknownSize || db == kUnknownSize) {
      int64_t other = da == kUnknownSize ? db : da;
      out[i] = other != 1 && other != kUnknownSize ? other : kUnknownSize;
    } else {
      if (da != db && da != 1 && db != 1) fail(loc, RuntimeErrorId::broadcast, {ErrorArg::shape(a), ErrorArg::shape(b)});
      out[i] = da == 1 ? db : da;
    }
  }
  return out;
}

// Fill and Reshape: the sizes are inputs 1...
// A fill's negative size is its error, reported as soon as the size is known (as compiled code
// checks each size it knows before the loop).
Shape ShapeEval::sizes_shape(const Node& n) {
  Shape s;
  for (int i = 1; i < n.num_inputs(); ++i) {
    std::optional<int64_t> size = size_of(n.input(i));
    if (size && n.kind() == NodeKind::Fill) checked_fill_size(n, i, *size);
    s.push_back(size ? *size : kUnknownSize);
  }
  return s;
}

// Only the slices decide the shape (scalar indices are not looked at), clamped as Python does.
Shape ShapeEval::index_shape(const IndexNode& n) {
  return ir::index_shape(shape(n.input(0)), n.specs(), [&](int64_t size, int lo, int hi) {
    std::optional<int64_t> lo_value = lo >= 0 ? size_of(n.input(1 + lo)) : std::nullopt;
    std::optional<int64_t> hi_value = hi >= 0 ? size_of(n.input(1 + hi)) : std::nullopt;
    if (size == kUnknownSize || (lo >= 0 && !lo_value) || (hi >= 0 && !hi_value)) return kUnknownSize;
    return python_slice(size, lo_value, hi_value).length;
  });
}

std::vector<Shape> ShapeEval::node_shapes(const Node& n) {
  auto in_shape = [&](int i) { return shape(n.input(i)); };
  switch (n.kind()) {
    case NodeKind::Param: SCANGEN_UNREACHABLE("param");
    case NodeKind::Constant:
    case NodeKind::DimSize: return {Shape{}};
    case NodeKind::Arange: return {has_value(n.output(0)) ? value(n.output(0)).shape() : Shape{kUnknownSize}};
    case NodeKind::Fill:
    case NodeKind::Reshape: return {sizes_shape(n)};
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Update:
    case NodeKind::CheckShape:
    case NodeKind::ScatterAdd:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::StopGradient: return {in_shape(0)};
    case NodeKind::Binary: return {partial_broadcast(in_shape(0), in_shape(1), n.loc())};
    case NodeKind::Select:
      return {partial_broadcast(partial_broadcast(in_shape(0), in_shape(1), n.loc()), in_shape(2), n.loc())};
    case NodeKind::Call: {
      Shape s;
      for (int i = 0; i < n.num_inputs(); ++i) s = partial_broadcast(s, in_shape(i), n.loc());
      return {s};
    }
    case NodeKind::Reduce:
    case NodeKind::ArgReduce: return {without_reduced_axis(n, in_shape(0))};
    case NodeKind::MatMul: return {matmul_shape(in_shape(0), in_shape(1))};
    case NodeKind::Index: return {index_shape(*n.as<IndexNode>())};
    case NodeKind::Transpose: return {transpose_shape(in_shape(0), n.as<TransposeNode>()->perm())};
    case NodeKind::Gather: return {gather_shape(in_shape(0), in_shape(1))};
    case NodeKind::TopK: return {top_k_shape(in_shape(0), size_of(n.input(1)).value_or(kUnknownSize))};
    case NodeKind::Scan: {
      const auto* scan = n.as<ScanNode>();
      ScanShapes s = scan_shapes(*scan);
      std::vector<Shape> out;
      for (size_t i = 0; i < s.rows.size(); ++i) {
        int64_t window = scan->info().window(int(i));
        Shape full{window > 0 && s.steps != kUnknownSize ? std::min(s.steps, window) : s.steps};
        full.insert(full.end(), s.rows[i].begin(), s.rows[i].end());
        out.push_back(full);
      }
      return out;
    }
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

std::vector<Shape> ShapeEval::rows_from_inputs(const ScanNode& n, std::vector<Shape> input_shapes,
                                               std::vector<std::optional<HostTensor>> input_values) {
  // Re-express the scan over params standing for its inputs, then ask for its shapes.
  ShapeEval outer(std::move(input_shapes), std::move(input_values));
  std::vector<Value> params;
  Builder b;
  for (int i = 0; i < n.num_inputs(); ++i) params.push_back(b.param(n.input(i).type(), i, "in", Loc{}));
  NodeRef over_params = b.rebuild(n, params);
  std::vector<Shape> rows = outer.scan_shapes(*over_params->as<ScanNode>(), /*with_steps=*/false).rows;
  for (const Shape& row : rows)
    SCANGEN_CHECK(std::find(row.begin(), row.end(), kUnknownSize) == row.end(),
                  "the shape of a scan output depends on a value that changes from step to step");
  return rows;
}

}  // namespace scangen::interp
