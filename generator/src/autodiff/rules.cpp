// The derivative rules of every node kind but Scan (scan_adjoint.cpp), and of every operator.
// Conventions at points without a derivative are the contract's (docs/gradients.md): abs at 0
// gives 0, max(a, b) gives all to a when a >= b, min(a, b) when a <= b, a max/min reduction gives
// all to the first element equal to the result, pow gives 0 to the exponent where the base is 0.
#include <cstdint>
#include <limits>

#include "autodiff/rules.h"
#include "autodiff/tensor_ops.h"
#include "support/check.h"

namespace scangen::autodiff {

using ir::BinaryOp;
using ir::IndexSpec;
using ir::ReduceOp;
using ir::UnaryOp;

namespace {

Value zero(AdjointContext& c, const Value& like) { return scalar(c, like.type().dtype, 0); }
Value one(AdjointContext& c, const Value& like) { return scalar(c, like.type().dtype, 1); }
Value where(AdjointContext& c, Value cond, Value a, Value b) { return c.builder.select(cond, a, b, c.loc); }
Value cmp(AdjointContext& c, BinaryOp op, Value a, Value b) { return c.builder.binary(op, a, b, c.loc); }
Value un(AdjointContext& c, UnaryOp op, Value x) { return c.builder.unary(op, x, c.loc); }

// ---- unary operators: the cotangent of x from x, y = op(x) and y's cotangent g (an empty Value:
// none flows)
using UnaryRule = Value (*)(AdjointContext& c, const Value& x, const Value& y, const Value& g);

Value d_Neg(AdjointContext& c, const Value&, const Value&, const Value& g) { return neg(c, g); }
Value d_Not(AdjointContext&, const Value&, const Value&, const Value&) { return {}; }
Value d_Abs(AdjointContext& c, const Value& x, const Value&, const Value& g) { return mul(c, g, un(c, UnaryOp::Sign, x)); }
Value d_Sign(AdjointContext&, const Value&, const Value&, const Value&) { return {}; }
Value d_Exp(AdjointContext& c, const Value&, const Value& y, const Value& g) { return mul(c, g, y); }
Value d_Log(AdjointContext& c, const Value& x, const Value&, const Value& g) { return div(c, g, x); }
Value d_Log1p(AdjointContext& c, const Value& x, const Value&, const Value& g) { return div(c, g, add(c, one(c, x), x)); }
Value d_Expm1(AdjointContext& c, const Value&, const Value& y, const Value& g) { return mul(c, g, add(c, y, one(c, y))); }
Value d_Sqrt(AdjointContext& c, const Value&, const Value& y, const Value& g) {
  return div(c, g, mul(c, scalar(c, y.type().dtype, 2), y));
}
Value d_Sin(AdjointContext& c, const Value& x, const Value&, const Value& g) { return mul(c, g, un(c, UnaryOp::Cos, x)); }
Value d_Cos(AdjointContext& c, const Value& x, const Value&, const Value& g) { return neg(c, mul(c, g, un(c, UnaryOp::Sin, x))); }
Value d_Tanh(AdjointContext& c, const Value&, const Value& y, const Value& g) { return mul(c, g, sub(c, one(c, y), mul(c, y, y))); }
Value d_Sigmoid(AdjointContext& c, const Value&, const Value& y, const Value& g) {
  return mul(c, g, mul(c, y, sub(c, one(c, y), y)));
}
Value d_Floor(AdjointContext&, const Value&, const Value&, const Value&) { return {}; }
Value d_Ceil(AdjointContext&, const Value&, const Value&, const Value&) { return {}; }

constexpr UnaryRule kUnaryRules[] = {
#define UNARY_OP(op, name, ints) &d_##op,
#include "ir/ops.def"
#undef UNARY_OP
};

// ---- binary operators: the cotangents of a and b at the broadcast shape (rule_Binary sums them
// down to each operand's shape)
struct Pair {
  Value a, b;
};
using BinaryRule = Pair (*)(AdjointContext& c, const Value& a, const Value& b, const Value& y, const Value& g);

Pair d_Add(AdjointContext&, const Value&, const Value&, const Value&, const Value& g) { return {g, g}; }
Pair d_Sub(AdjointContext& c, const Value&, const Value&, const Value&, const Value& g) { return {g, neg(c, g)}; }
Pair d_Mul(AdjointContext& c, const Value& a, const Value& b, const Value&, const Value& g) {
  return {mul(c, g, b), mul(c, g, a)};
}
Pair d_Div(AdjointContext& c, const Value&, const Value& b, const Value& y, const Value& g) {
  return {div(c, g, b), neg(c, div(c, mul(c, g, y), b))};
}
// fmod(a, b) = a - b * trunc(a / b)
Pair d_Mod(AdjointContext& c, const Value& a, const Value& b, const Value&, const Value& g) {
  Value q = div(c, a, b);
  Value trunc = where(c, cmp(c, BinaryOp::Lt, q, zero(c, q)), un(c, UnaryOp::Ceil, q), un(c, UnaryOp::Floor, q));
  return {g, neg(c, mul(c, g, trunc))};
}
Pair d_Pow(AdjointContext& c, const Value& a, const Value& b, const Value& y, const Value& g) {
  Value da = mul(c, g, mul(c, b, c.builder.binary(BinaryOp::Pow, a, sub(c, b, one(c, b)), c.loc)));
  Value db = mul(c, g, mul(c, y, un(c, UnaryOp::Log, a)));
  return {da, where(c, cmp(c, BinaryOp::Eq, a, zero(c, a)), zero(c, g), db)};
}
Pair to_first_when(AdjointContext& c, Value first_wins, const Value& g) {
  return {where(c, first_wins, g, zero(c, g)), where(c, first_wins, zero(c, g), g)};
}
Pair d_Min(AdjointContext& c, const Value& a, const Value& b, const Value&, const Value& g) {
  return to_first_when(c, cmp(c, BinaryOp::Le, a, b), g);
}
Pair d_Max(AdjointContext& c, const Value& a, const Value& b, const Value&, const Value& g) {
  return to_first_when(c, cmp(c, BinaryOp::Ge, a, b), g);
}
// Comparisons and logic give bools, through which no gradient flows.
Pair none(AdjointContext&, const Value&, const Value&, const Value&, const Value&) { return {}; }
#define NO_GRADIENT(op) constexpr BinaryRule d_##op = &none;
NO_GRADIENT(Eq) NO_GRADIENT(Ne) NO_GRADIENT(Lt) NO_GRADIENT(Le) NO_GRADIENT(Gt) NO_GRADIENT(Ge)
NO_GRADIENT(And) NO_GRADIENT(Or)
#undef NO_GRADIENT

constexpr BinaryRule kBinaryRules[] = {
#define BINARY_OP(op, name, cls) d_##op,
#include "ir/ops.def"
#undef BINARY_OP
};

// ---- reductions: the cotangent of x from y = reduce(x) and g
using ReduceRule = Value (*)(AdjointContext& c, const Value& x, const Value& y, const Value& g, std::optional<int> axis);

Value d_Sum(AdjointContext& c, const Value& x, const Value&, const Value& g, std::optional<int> axis) {
  return expand_reduced(c, g, x, axis);
}

Value element_count(AdjointContext& c, const Value& x, std::optional<int> axis) {
  if (axis) return c.builder.dim_size(x, *axis, c.loc);
  Value n = i64(c, 1);
  for (const Value& d : dims_of(c, x)) n = mul(c, n, d);
  return n;
}

Value d_Mean(AdjointContext& c, const Value& x, const Value&, const Value& g, std::optional<int> axis) {
  Value count = c.builder.cast(element_count(c, x, axis), g.type().dtype, c.loc);
  return expand_reduced(c, div(c, g, count), x, axis);
}

// The product of the others: y / x where x has no zero; where it has exactly one, that element gets
// the product of the rest and the others 0; with two or more zeros, all get 0.
Value d_Prod(AdjointContext& c, const Value& x, const Value& y, const Value& g, std::optional<int> axis) {
  ir::Builder& b = c.builder;
  Value is_zero = cmp(c, BinaryOp::Eq, x, zero(c, x));
  Value nonzero_product = b.reduce(ReduceOp::Prod, where(c, is_zero, one(c, x), x), axis, c.loc);
  Value zeros = b.reduce(ReduceOp::Sum, b.cast(is_zero, x.type().dtype, c.loc), axis, c.loc);
  Value zero_count = expand_reduced(c, zeros, x, axis);
  Value no_zero = cmp(c, BinaryOp::Eq, zero_count, zero(c, x));
  Value the_zero = b.binary(BinaryOp::And, is_zero, cmp(c, BinaryOp::Eq, zero_count, one(c, x)), c.loc);
  Value with_no_zero = div(c, expand_reduced(c, mul(c, g, y), x, axis), x);
  Value with_one_zero = expand_reduced(c, mul(c, g, nonzero_product), x, axis);
  return where(c, no_zero, with_no_zero, where(c, the_zero, with_one_zero, zero(c, x)));
}

// Row-major positions of x's elements along `axis` (or in all of x), shaped to broadcast with x.
Value positions(AdjointContext& c, const Value& x, std::optional<int> axis) {
  ir::Builder& b = c.builder;
  Value n = element_count(c, x, axis);
  Value pos = b.arange(i64(c, 0), n, std::nullopt, c.loc);
  std::vector<Value> dims;
  std::vector<ir::Dim> static_dims;
  for (int i = axis ? *axis : 0; i < x.type().rank(); ++i) {
    bool keep = !axis || i == *axis;
    dims.push_back(keep ? b.dim_size(x, i, c.loc) : i64(c, 1));
    static_dims.push_back(keep ? x.type().shape[size_t(i)] : ir::Dim::constant(1));
  }
  return b.reshape(pos, dims, static_dims, c.loc);
}

// All to the first element (row-major) equal to the result; a NaN result came from the first NaN.
Value first_extreme(AdjointContext& c, const Value& x, const Value& y, const Value& g, std::optional<int> axis) {
  ir::Builder& b = c.builder;
  if (x.type().is_scalar()) return g;
  Value ye = expand_reduced(c, y, x, axis);
  Value both_nan = b.binary(BinaryOp::And, cmp(c, BinaryOp::Ne, x, x), cmp(c, BinaryOp::Ne, ye, ye), c.loc);
  Value equal = b.binary(BinaryOp::Or, cmp(c, BinaryOp::Eq, x, ye), both_nan, c.loc);
  Value pos = positions(c, x, axis);
  Value none = i64(c, std::numeric_limits<int64_t>::max());
  Value first = b.reduce(ReduceOp::Min, where(c, equal, pos, none), axis, c.loc);
  Value is_first = b.binary(BinaryOp::And, equal, cmp(c, BinaryOp::Eq, pos, expand_reduced(c, first, x, axis)), c.loc);
  return where(c, is_first, expand_reduced(c, g, x, axis), zero(c, x));
}
constexpr ReduceRule d_Max_reduce = &first_extreme;
constexpr ReduceRule d_Min_reduce = &first_extreme;
constexpr ReduceRule d_Sum_reduce = &d_Sum;
constexpr ReduceRule d_Prod_reduce = &d_Prod;
constexpr ReduceRule d_Mean_reduce = &d_Mean;

constexpr ReduceRule kReduceRules[] = {
#define REDUCE_OP(op, name) d_##op##_reduce,
#include "ir/ops.def"
#undef REDUCE_OP
};

constexpr int count_unary() {
  int n = 0;
#define UNARY_OP(op, name, ints) ++n;
#include "ir/ops.def"
#undef UNARY_OP
  return n;
}
constexpr int count_binary() {
  int n = 0;
#define BINARY_OP(op, name, cls) ++n;
#include "ir/ops.def"
#undef BINARY_OP
  return n;
}
constexpr int count_reduce() {
  int n = 0;
#define REDUCE_OP(op, name) ++n;
#include "ir/ops.def"
#undef REDUCE_OP
  return n;
}
static_assert(std::size(kUnaryRules) == size_t(count_unary()), "one rule per unary operator");
static_assert(std::size(kBinaryRules) == size_t(count_binary()), "one rule per binary operator");
static_assert(std::size(kReduceRules) == size_t(count_reduce()), "one rule per reduction");

std::vector<Value> inputs_none(const ir::Node& n) { return std::vector<Value>(size_t(n.num_inputs())); }

}  // namespace

bool rule_tables_in_order() {
  // The tables are generated from ops.def in its order, as the enums are: an entry's position is
  // its operator.
  return std::size(kUnaryRules) == size_t(UnaryOp::Ceil) + 1 && std::size(kBinaryRules) == size_t(BinaryOp::Or) + 1 &&
         std::size(kReduceRules) == size_t(ReduceOp::Mean) + 1;
}

// ---- node kinds

#define NO_GRADIENT_KIND(kind)                                                                              \
  std::vector<Value> rule_##kind(AdjointContext&, const ir::Node& n, const std::vector<Value>&, const std::vector<bool>&) { \
    return inputs_none(n);                                                                                  \
  }
// Leaves, integer results, and the marker that stops gradients.
NO_GRADIENT_KIND(Param)
NO_GRADIENT_KIND(Constant)
NO_GRADIENT_KIND(Arange)
NO_GRADIENT_KIND(DimSize)
NO_GRADIENT_KIND(StopGradient)
NO_GRADIENT_KIND(CheckLengths)  // integer lengths
NO_GRADIENT_KIND(CheckOffsets)  // integer offsets
NO_GRADIENT_KIND(ArgReduce)
NO_GRADIENT_KIND(TopK)
#undef NO_GRADIENT_KIND

std::vector<Value> rule_Fill(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g, const std::vector<bool>&) {
  std::vector<Value> in = inputs_none(n);
  in[0] = c.builder.reduce(ReduceOp::Sum, g[0], std::nullopt, c.loc);
  return in;
}

std::vector<Value> rule_Unary(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g, const std::vector<bool>&) {
  const auto& u = *n.as<ir::UnaryNode>();
  return {kUnaryRules[size_t(u.op())](c, c.primal(n.input(0)), c.primal(n.output(0)), g[0])};
}

std::vector<Value> rule_Binary(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                               const std::vector<bool>& needed) {
  const auto& bn = *n.as<ir::BinaryNode>();
  Value a = c.primal(n.input(0)), b = c.primal(n.input(1));
  Pair d = kBinaryRules[size_t(bn.op())](c, a, b, c.primal(n.output(0)), g[0]);
  return {needed[0] && d.a ? unbroadcast(c, d.a, a) : Value(), needed[1] && d.b ? unbroadcast(c, d.b, b) : Value()};
}

std::vector<Value> rule_Select(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                               const std::vector<bool>& needed) {
  Value cond = c.primal(n.input(0)), a = c.primal(n.input(1)), b = c.primal(n.input(2));
  Pair d = to_first_when(c, cond, g[0]);
  return {Value(), needed[1] ? unbroadcast(c, d.a, a) : Value(), needed[2] ? unbroadcast(c, d.b, b) : Value()};
}

std::vector<Value> rule_Cast(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g, const std::vector<bool>&) {
  DType from = n.input(0).type().dtype;
  if (!is_float(from)) return inputs_none(n);
  return {c.builder.cast(g[0], from, c.loc)};
}

std::vector<Value> rule_Reduce(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g, const std::vector<bool>&) {
  const auto& r = *n.as<ir::ReduceNode>();
  return {kReduceRules[size_t(r.op())](c, c.primal(n.input(0)), c.primal(n.output(0)), g[0], r.axis())};
}

std::vector<Value> rule_MatMul(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                               const std::vector<bool>& needed) {
  ir::Builder& b = c.builder;
  Value x = c.primal(n.input(0)), w = c.primal(n.input(1)), gy = g[0];
  int rx = x.type().rank(), rw = w.type().rank();
  auto mm = [&](Value p, Value q) { return b.matmul(p, q, c.loc); };
  Value gx, gw;
  if (rx == 1 && rw == 1) {  // dot product
    if (needed[0]) gx = mul(c, gy, w);
    if (needed[1]) gw = mul(c, gy, x);
  } else if (rx == 1) {  // [k] @ [k, n]
    if (needed[0]) gx = mm(w, gy);
    if (needed[1]) gw = mul(c, insert_unit_axis(c, x, 1), gy);
  } else if (rw == 1) {  // [m, k] @ [k]
    if (needed[0]) gx = mul(c, insert_unit_axis(c, gy, 1), w);
    if (needed[1]) gw = mm(gy, x);
  } else {  // [m, k] @ [k, n]
    if (needed[0]) gx = mm(gy, transpose(c, w));
    if (needed[1]) gw = mm(transpose(c, x), gy);
  }
  return {gx, gw};
}

std::vector<Value> rule_Index(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g, const std::vector<bool>&) {
  const auto& ix = *n.as<ir::IndexNode>();
  std::vector<Value> operands;
  for (int i = 1; i < n.num_inputs(); ++i) operands.push_back(c.primal(n.input(i)));
  std::vector<Value> in = inputs_none(n);
  Value x = c.primal(n.input(0));
  in[0] = c.builder.update(zeros_like(c, x), g[0], ix.specs(), operands, /*accumulate=*/true, c.loc);
  return in;
}

std::vector<Value> rule_Update(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                               const std::vector<bool>& needed) {
  const auto& u = *n.as<ir::UpdateNode>();
  std::vector<Value> operands;
  for (int i = 2; i < n.num_inputs(); ++i) operands.push_back(c.primal(n.input(i)));
  std::vector<Value> in = inputs_none(n);
  if (needed[0])
    in[0] = u.accumulate() ? g[0] : c.builder.update(g[0], zero(c, g[0]), u.specs(), operands, false, c.loc);
  if (needed[1]) in[1] = unbroadcast(c, c.builder.index(g[0], u.specs(), operands, c.loc), c.primal(n.input(1)));
  return in;
}

std::vector<Value> rule_CheckShape(AdjointContext&, const ir::Node& n, const std::vector<Value>& g,
                                   const std::vector<bool>&) {
  std::vector<Value> in = inputs_none(n);
  in[0] = g[0];
  return in;
}

std::vector<Value> rule_Reshape(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                                const std::vector<bool>&) {
  std::vector<Value> in = inputs_none(n);
  Value x = c.primal(n.input(0));
  in[0] = x.type().is_scalar() ? c.builder.reduce(ReduceOp::Sum, g[0], std::nullopt, c.loc)
                               : c.builder.reshape(g[0], dims_of(c, x), x.type().shape, c.loc);
  return in;
}

std::vector<Value> rule_Transpose(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                                  const std::vector<bool>&) {
  const std::vector<int>& perm = n.as<ir::TransposeNode>()->perm();
  std::vector<int> inverse(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inverse[size_t(perm[d])] = int(d);
  std::vector<Value> in = inputs_none(n);
  in[0] = c.builder.transpose(g[0], inverse, c.loc);
  return in;
}

// A gather gives each row it took the cotangents of its copies, summed.
std::vector<Value> rule_Gather(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                               const std::vector<bool>&) {
  std::vector<Value> in = inputs_none(n);
  Value x = c.primal(n.input(0));
  in[0] = c.builder.scatter_add(zeros_like(c, x), c.primal(n.input(1)), g[0], c.loc);
  return in;
}

std::vector<Value> rule_ScatterAdd(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                                   const std::vector<bool>& needed) {
  std::vector<Value> in = inputs_none(n);
  in[0] = g[0];
  if (needed[2]) in[2] = c.builder.gather(g[0], c.primal(n.input(1)), c.loc);
  return in;
}

// d f(x...) / d x_i = f_d<i>(x...) (another imported function), times the upstream cotangent and
// reduced over the axes x_i was broadcast along; integer and bool arguments get none.
std::vector<Value> rule_Call(AdjointContext& c, const ir::Node& n, const std::vector<Value>& g,
                             const std::vector<bool>& needed) {
  const auto& call = *n.as<ir::CallNode>();
  const ir::ImportedFunction& f = call.function();
  std::vector<Value> args;
  for (const Value& in : n.inputs()) args.push_back(c.primal(in));
  std::vector<Value> in = inputs_none(n);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!needed[i] || !g[0] || !is_float(f.params[i])) continue;
    int partial = f.partials[i];
    if (partial < 0 || call.import()->functions[size_t(partial)].params != f.params)
      throw MissingPartial{&call, int(i)};
    Value d = c.builder.call(call.import(), partial, args, c.loc);
    if (d.type().dtype != g[0].type().dtype) d = c.builder.cast(d, g[0].type().dtype, c.loc);
    Value gi = mul(c, g[0], d);
    if (gi.type().dtype != f.params[i]) gi = c.builder.cast(gi, f.params[i], c.loc);
    in[i] = unbroadcast(c, gi, args[i]);
  }
  return in;
}

Rule rule_for(ir::NodeKind kind) {
  static constexpr Rule kRules[] = {
#define IR_NODE(kind, name, checks) &rule_##kind,
#include "ir/nodes.def"
#undef IR_NODE
  };
  return kRules[size_t(kind)];
}

}  // namespace scangen::autodiff
