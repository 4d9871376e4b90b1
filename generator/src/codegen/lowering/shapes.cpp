// The dims of every node kind, with the run-time checks shapes need (broadcasting, sizes >= 0,
// declared dims): the same checks and messages as the interpreter.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "ir/checks.h"
#include "ir/shape_rules.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

// ---- shapes

std::vector<ExprRef> GraphLowering::node_dims(const ir::Node& n, int output) {
  const ir::Type& type = n.output_types()[size_t(output)];
  // A dimension known to be a constant is that constant.
  auto known = [&](std::vector<ExprRef> d) {
    for (size_t i = 0; i < d.size() && i < type.shape.size(); ++i)
      if (auto c = type.shape[i].const_value()) d[i] = lir::i64(*c);
    return d;
  };
  switch (n.kind()) {
    case NodeKind::Param: SCANGEN_UNREACHABLE("param dims come from the param");
    case NodeKind::StopGradient: SCANGEN_UNREACHABLE("stop_gradient markers are removed by the frontend");
    case NodeKind::Constant:
    case NodeKind::DimSize: return {};
    case NodeKind::Arange: {
      ExprRef a = size_operand(n.input(0)), b = size_operand(n.input(1));
      if (!a || !b) return known({nullptr});
      // stop - start must not overflow: stop <= INT64_MAX + start where start < 0.
      if (!ir::never_negative(n.input(0)))
        F.check(lir::ge(lir::add(lir::i64(INT64_MAX), lir::min(a, lir::i64(0))), b), n.loc(),
                RuntimeErrorId::arange_too_large, {});
      // max(stop, start) - start: 0 for stop <= start, without computing a stop - start that
      // could wrap (arange(1, INT64_MIN) is empty, as in the interpreter).
      return known({F.let("length", lir::sub(lir::max(b, a), a))});
    }
    case NodeKind::Fill: {
      std::vector<ExprRef> d;
      for (int i = 1; i < n.num_inputs(); ++i) {
        ExprRef size = size_operand(n.input(i));
        if (size && !ir::never_negative(n.input(i)))
          F.check(lir::ge(size, lir::i64(0)), n.loc(), RuntimeErrorId::fill_size_negative,
                  {ErrorArg::text_of(std::to_string(i - 1)), ErrorArg::number(size)});
        d.push_back(size);
      }
      return known(d);
    }
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::Update: return dims(n.input(0));
    case NodeKind::CheckShape: {
      const auto* c = n.as<ir::CheckShapeNode>();
      std::vector<ExprRef> d = dims(n.input(0));
      for (size_t axis = 0; axis < c->checks().size(); ++axis) {
        const DimCheck& k = c->checks()[axis];
        if (k.kind == DimCheck::Kind::None || !d[axis]) continue;  // an unknown dim is checked in the step
        ExprRef want = k.kind == DimCheck::Kind::Const ? lir::i64(k.value) : value(n.input(int(k.value))).scalar;
        const ErrorArg what = ErrorArg::text_of(c->what()), at = ErrorArg::text_of(std::to_string(axis));
        if (k.symbol.empty())
          F.check(lir::eq(d[axis], want), n.loc(), RuntimeErrorId::dimension_mismatch,
                  {what, at, ErrorArg::number(d[axis]), ErrorArg::number(want)});
        else
          F.check(lir::eq(d[axis], want), n.loc(), RuntimeErrorId::dimension_mismatch_symbol,
                  {what, at, ErrorArg::number(d[axis]), ErrorArg::text_of(k.symbol), ErrorArg::number(want)});
      }
      return d;
    }
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Call: return known(broadcast_dims(n));
    case NodeKind::Reshape: {
      std::vector<ExprRef> d;
      for (int i = 1; i < n.num_inputs(); ++i) d.push_back(size_operand(n.input(i)));
      if (n.as<ir::ReshapeNode>()->checked()) check_reshape(*n.as<ir::ReshapeNode>(), d);
      return known(d);
    }
    case NodeKind::Transpose: return ir::transpose_shape(dims(n.input(0)), n.as<ir::TransposeNode>()->perm());
    case NodeKind::Gather: return ir::gather_shape(dims(n.input(0)), dims(n.input(1)));
    case NodeKind::ScatterAdd: return dims(n.input(0));
    case NodeKind::TopK: return known(ir::top_k_shape(dims(n.input(0)), size_operand(n.input(1))));
    case NodeKind::Reduce:
    case NodeKind::ArgReduce: return ir::without_reduced_axis(n, dims(n.input(0)));
    case NodeKind::MatMul: return ir::matmul_shape(dims(n.input(0)), dims(n.input(1)));
    case NodeKind::Index: return known(index_dims(*n.as<ir::IndexNode>()));
    case NodeKind::Scan: return known(scan_dims(*n.as<ir::ScanNode>(), output));
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

// The language's reshape: no negative size, and as many elements as x. The product saturates
// above the count (sizes are the user's and may overflow).
void GraphLowering::check_reshape(const ir::ReshapeNode& n, const std::vector<ExprRef>& sizes) {
  std::vector<ExprRef> x = dims(n.input(0));
  for (const ExprRef& d : sizes)
    if (!d) return;  // a size of a step value: checked in the step
  for (const ExprRef& d : x)
    if (!d) return;
  ExprRef count = F.product(x, "count");
  ExprRef ok = lir::imm(ir::Scalar::of_bool(true));
  ExprRef product = lir::i64(1);
  for (const ExprRef& d : sizes) {
    ok = lir::logical_and(ok, lir::ge(d, lir::i64(0)));
    ExprRef over = lir::logical_and(lir::lt(lir::i64(0), d), lir::lt(lir::quotient(count, lir::max(d, lir::i64(1))), product));
    product = F.let("product", lir::select(lir::eq(d, lir::i64(0)), lir::i64(0),
                                           lir::select(over, lir::add(count, lir::i64(1)), lir::mul(product, lir::max(d, lir::i64(0))))));
  }
  F.check(lir::logical_and(ok, lir::eq(product, count)), n.loc(), RuntimeErrorId::reshape_count,
          {ErrorArg::number(count), ErrorArg::shape(sizes)});
}

// NumPy broadcasting, statically where the IR knows the dims are equal or 1. A dim that depends on
// a step value not known yet leaves the result's unknown (and its check to the step).
std::vector<ExprRef> GraphLowering::broadcast_dims(const ir::Node& n) {
  const ir::Type& type = n.output_types()[0];
  std::vector<std::vector<ExprRef>> in;
  std::vector<const ir::Type*> in_types;
  for (int i = 0; i < n.num_inputs(); ++i) {
    in.push_back(dims(n.input(i)));
    in_types.push_back(&n.input(i).type());
  }
  size_t rank = size_t(type.rank());
  std::vector<ExprRef> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    ExprRef result;
    std::vector<ExprRef> candidates;
    bool unknown = false;
    for (size_t k = 0; k < in.size(); ++k) {
      size_t r = in[k].size();
      if (d + r < rank) continue;
      size_t j = d + r - rank;
      const ir::Dim& sd = in_types[k]->shape[j];
      if (sd.is_const(1)) continue;
      unknown = unknown || !in[k][j];
      if (sd.same_as(type.shape[d])) {
        result = in[k][j];
        continue;
      }
      candidates.push_back(in[k][j]);
    }
    if (unknown) continue;
    if (!result) result = lir::i64(1);
    for (const ExprRef& c : candidates) {
      if (lir::same_expr(c, result)) continue;
      // result = broadcast(result, c), failing like the interpreter when neither is 1.
      ExprRef ok = lir::logical_or(lir::logical_or(lir::eq(c, result), lir::eq(c, lir::i64(1))),
                                   lir::eq(result, lir::i64(1)));
      F.check(ok, n.loc(), RuntimeErrorId::broadcast,
              {ErrorArg::shape(in[0]), ErrorArg::shape(in.size() > 1 ? in[1] : in[0])});
      result = F.let("size", lir::select(lir::eq(result, lir::i64(1)), c, result));
    }
    out[d] = result;
  }
  return out;
}

// Only the slices decide the shape; their bounds are values, clamped as Python does. A length
// that depends on a step value not known yet is null.
std::vector<ExprRef> GraphLowering::index_dims(const ir::IndexNode& n) {
  return ir::index_shape(dims(n.input(0)), n.specs(), [&](const ExprRef& size, int lo, int hi) -> ExprRef {
    ExprRef lo_value = lo >= 0 ? size_operand(n.input(1 + lo)) : lir::i64(0);
    ExprRef hi_value = hi >= 0 ? size_operand(n.input(1 + hi)) : size;
    if (!size || !lo_value || !hi_value) return nullptr;
    auto clamp = [&](ExprRef v) {
      ExprRef wrapped = lir::select(lir::lt(v, lir::i64(0)), lir::add(v, size), v);
      return F.let("bound", lir::min(lir::max(wrapped, lir::i64(0)), size));
    };
    ExprRef start = lo >= 0 ? clamp(lo_value) : lir::i64(0);
    ExprRef stop = hi >= 0 ? clamp(hi_value) : size;
    return F.let("length", lir::max(lir::sub(stop, start), lir::i64(0)));
  });
}

// The step count and the step shape of a nested scan without running it, unless it stops on
// `until` (see ir/analysis.h: whatever an output's shape needs does not change from step to step).
std::vector<ExprRef> GraphLowering::scan_dims(const ir::ScanNode& n, int output) {
  const ir::ScanInfo& info = n.info();
  const Value out = n.output(output);
  if (value_memo_.count(&n) || (info.has_until && (!shapes_only || available(out)))) return value(out).dims;
  // The rows: null with `until` (the steps taken, not the bound `steps`), or when a step value not
  // known yet sizes them.
  ExprRef steps;
  if (info.has_until) {
    // only the scan knows
  } else if (info.has_steps) {
    if (ExprRef given = size_operand(n.input(info.steps_input()))) steps = F.let("steps", lir::max(given, lir::i64(0)));
  } else {
    bool known_steps = true;
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      ExprRef length = dims(n.input(info.sequence_input(int(s))))[0];
      known_steps = known_steps && length;
      if (!known_steps) break;
      ExprRef allowed = lir::max(lir::sub(length, lir::i64(info.sequences[s].span())), lir::i64(0));
      steps = F.let("steps", s == 0 ? allowed : lir::min(steps, allowed));
    }
    if (!known_steps) steps = nullptr;
  }
  std::vector<ExprRef> d{steps};
  if (output < int(info.states.size())) {
    std::vector<ExprRef> init = dims(n.input(info.init_input(output)));
    if (info.states[size_t(output)].init_has_rows()) init.erase(init.begin());
    d.insert(d.end(), init.begin(), init.end());
    return d;
  }
  const ir::Graph& body = n.body();
  std::vector<Tensor> params(body.params.size());
  params[size_t(info.body_index_param())].dtype = DType::I64;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const Value& seq = n.input(info.sequence_input(int(s)));
    std::vector<ExprRef> sd = dims(seq);
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) {
      Tensor& p = params[size_t(info.body_sequence_param(int(s), int(k)))];
      p.dtype = seq.type().dtype;
      p.rank = seq.type().rank() - 1;
      p.dims.assign(sd.begin() + 1, sd.end());
    }
  }
  for (size_t s = 0; s < info.states.size(); ++s) {
    std::vector<ExprRef> init = dims(n.input(info.init_input(int(s))));
    if (info.states[s].init_has_rows()) init.erase(init.begin());
    for (size_t k = 0; k < info.states[s].lags.size(); ++k) {
      Tensor& p = params[size_t(info.body_state_param(int(s), int(k)))];
      p.dtype = n.input(info.init_input(int(s))).type().dtype;
      p.rank = int(init.size());
      p.dims = init;
    }
  }
  for (int p = 0; p < info.num_params; ++p) {
    const Value& in = n.input(info.param_input(p));
    Tensor t;
    if (available(in)) {
      t = value(in);
    } else {
      t.dtype = in.type().dtype;
      t.rank = in.type().rank();
      t.dims = dims(in);
    }
    params[size_t(info.body_param(p))] = t;
  }
  GraphLowering shapes(F, body, std::move(params));
  shapes.shapes_only = true;
  std::vector<ExprRef> row = shapes.dims(body.results[size_t(output)]);
  d.insert(d.end(), row.begin(), row.end());
  return d;
}

}  // namespace scangen::codegen::lowering
