#include "ir/builder.h"

#include "ir/shape_rules.h"
#include "support/check.h"
#include "support/limits.h"

namespace scangen::ir {

template <class T, class... Args> NodeRef Builder::make(Args&&... args) {
  auto node = std::make_shared<T>(std::forward<Args>(args)...);
  if (observer_) observer_(*node);
  return node;
}

std::optional<Scalar> constant_value(const Value& v) {
  if (!v) return std::nullopt;
  if (const auto* c = v.node->as<ConstantNode>()) return c->value();
  return std::nullopt;
}

namespace {

void check_scalar_int(const Value& v, const char* what) {
  SCANGEN_CHECK(v && v.type().is_scalar() && is_int(v.type().dtype),
                std::string(what) + " must be an integer scalar");
}

std::vector<Dim> broadcast_or_die(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  auto s = broadcast_shapes(a, b);
  SCANGEN_CHECK(s.has_value(), "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
  return *s;
}

}  // namespace

Value Builder::param(Type type, int index, std::string name, Loc loc) {
  return Value(make<ParamNode>(std::move(type), index, std::move(name), loc));
}

Value Builder::constant(Scalar value, Loc loc) { return Value(make<ConstantNode>(value, loc)); }

Value Builder::arange(Value start, Value stop, std::optional<Dim> length, Loc loc) {
  SCANGEN_CHECK(start.type().is_scalar() && start.type().dtype == DType::I64, "arange start must be i64");
  SCANGEN_CHECK(stop.type().is_scalar() && stop.type().dtype == DType::I64, "arange stop must be i64");
  Dim n = Dim::fresh_unknown();
  auto a = constant_value(start), b = constant_value(stop);
  if (a && b) {
    n = Dim::constant(std::max<int64_t>(b->i - a->i, 0));
  } else if (length) {
    n = *length;
  }
  return Value(make<ArangeNode>(std::move(start), std::move(stop), Type(DType::I64, {n}), loc));
}

Value Builder::fill(Value value, std::vector<Value> dims, std::vector<Dim> static_dims, Loc loc) {
  SCANGEN_CHECK(value.type().is_scalar(), "fill value must be a scalar");
  SCANGEN_CHECK(dims.size() == static_dims.size(), "fill dims and static dims differ in count");
  for (size_t i = 0; i < dims.size(); ++i) {
    SCANGEN_CHECK(dims[i].type().is_scalar() && dims[i].type().dtype == DType::I64, "fill dims must be i64");
    if (auto c = constant_value(dims[i])) static_dims[i] = Dim::constant(c->i);
  }
  Type t(value.type().dtype, std::move(static_dims));
  std::vector<Value> inputs{std::move(value)};
  inputs.insert(inputs.end(), dims.begin(), dims.end());
  return Value(make<FillNode>(std::move(inputs), std::move(t), loc));
}

Value Builder::dim_size(Value x, int axis, Loc loc) {
  SCANGEN_CHECK(axis >= 0 && axis < x.type().rank(), "dim axis out of range");
  return Value(make<DimSizeNode>(std::move(x), axis, loc));
}

Value Builder::unary(UnaryOp op, Value x, Loc loc) {
  DType d = x.type().dtype;
  if (op == UnaryOp::Not) {
    SCANGEN_CHECK(d == DType::Bool, "not needs bool");
  } else {
    SCANGEN_CHECK(d != DType::Bool, std::string(unary_op_name(op)) + " on bool");
    SCANGEN_CHECK(is_float(d) || unary_op_allows_int(op), std::string(unary_op_name(op)) + " needs a float operand");
  }
  Type t = x.type();
  return Value(make<UnaryNode>(op, std::move(x), std::move(t), loc));
}

Value Builder::binary(BinaryOp op, Value a, Value b, Loc loc) {
  DType d = a.type().dtype;
  SCANGEN_CHECK(d == b.type().dtype, std::string(binary_op_name(op)) + " operands differ in dtype: " +
                                         a.type().str() + " and " + b.type().str());
  BinaryClass cls = binary_op_class(op);
  if (cls == BinaryClass::Arith) SCANGEN_CHECK(d != DType::Bool, std::string(binary_op_name(op)) + " on bool");
  if (cls == BinaryClass::Logic) SCANGEN_CHECK(d == DType::Bool, std::string(binary_op_name(op)) + " needs bool");
  Type t(cls == BinaryClass::Arith ? d : DType::Bool, broadcast_or_die(a.type().shape, b.type().shape));
  return Value(make<BinaryNode>(op, std::move(a), std::move(b), std::move(t), loc));
}

Value Builder::select(Value cond, Value a, Value b, Loc loc) {
  SCANGEN_CHECK(cond.type().dtype == DType::Bool, "select condition must be bool");
  SCANGEN_CHECK(a.type().dtype == b.type().dtype, "select branches differ in dtype");
  auto s = broadcast_or_die(broadcast_or_die(cond.type().shape, a.type().shape), b.type().shape);
  Type t(a.type().dtype, std::move(s));
  return Value(make<SelectNode>(std::move(cond), std::move(a), std::move(b), std::move(t), loc));
}

Value Builder::call(ImportRef import, int function, std::vector<Value> args, Loc loc) {
  SCANGEN_CHECK(import && function >= 0 && size_t(function) < import->functions.size(), "call of no imported function");
  const ImportedFunction& f = import->functions[size_t(function)];
  SCANGEN_CHECK(args.size() == f.params.size(), "call of " + f.name + " with a wrong number of arguments");
  std::vector<Dim> shape;
  for (size_t i = 0; i < args.size(); ++i) {
    SCANGEN_CHECK(args[i].type().dtype == f.params[i], "argument of " + f.name + " has the wrong dtype");
    shape = broadcast_or_die(shape, args[i].type().shape);
  }
  Type t(f.result, std::move(shape));
  return Value(make<CallNode>(std::move(import), function, std::move(args), std::move(t), loc));
}

Value Builder::cast(Value x, DType to, Loc loc) {
  Type t = x.type().with_dtype(to);
  return Value(make<CastNode>(std::move(x), std::move(t), loc));
}

Value Builder::reduce(ReduceOp op, Value x, std::optional<int> axis, Loc loc) {
  DType d = x.type().dtype;
  SCANGEN_CHECK(d != DType::Bool, "reduction of bool");
  if (op == ReduceOp::Mean) SCANGEN_CHECK(is_float(d), "mean needs a float operand");
  if (axis) SCANGEN_CHECK(*axis >= 0 && *axis < x.type().rank(), "reduce axis out of range");
  Type t(d, without_axis(x.type().shape, axis));
  return Value(make<ReduceNode>(op, std::move(x), axis, std::move(t), loc));
}

std::optional<std::vector<Dim>> matmul_result_shape(const Type& a, const Type& b) {
  int ra = a.rank(), rb = b.rank();
  if (ra < 1 || ra > 2 || rb < 1 || rb > 2) return std::nullopt;
  const Dim& ka = a.shape[size_t(ra - 1)];
  const Dim& kb = b.shape[0];
  if (ka.provably_different(kb)) return std::nullopt;
  return matmul_shape(a.shape, b.shape);
}

Value Builder::matmul(Value a, Value b, Loc loc) {
  SCANGEN_CHECK(a.type().dtype == b.type().dtype && a.type().dtype != DType::Bool, "matmul operand dtypes");
  auto s = matmul_result_shape(a.type(), b.type());
  SCANGEN_CHECK(s.has_value(), "matmul shapes " + a.type().str() + " @ " + b.type().str());
  Type t(a.type().dtype, std::move(*s));
  return Value(make<MatMulNode>(std::move(a), std::move(b), std::move(t), loc));
}

std::vector<Dim> index_result_shape(const Type& x, const std::vector<IndexSpec>& specs,
                                    const std::vector<Value>& operands) {
  SCANGEN_CHECK(specs.size() <= size_t(x.rank()), "more indices than dimensions");
  // A slice of a constant size with constant bounds has a constant length; any other, one
  // known only when the program runs.
  return index_shape(x.shape, specs, [&](const Dim& size, int lo, int hi) {
    std::optional<Scalar> lo_value = lo >= 0 ? constant_value(operands.at(size_t(lo))) : std::nullopt;
    std::optional<Scalar> hi_value = hi >= 0 ? constant_value(operands.at(size_t(hi))) : std::nullopt;
    std::optional<int64_t> n = size.const_value();
    if (!n || (lo >= 0 && !lo_value) || (hi >= 0 && !hi_value)) return Dim::fresh_unknown();
    auto bound = [](const std::optional<Scalar>& v) { return v ? std::optional<int64_t>(v->i) : std::nullopt; };
    return Dim::constant(python_slice(*n, bound(lo_value), bound(hi_value)).length);
  });
}

Value Builder::index(Value x, std::vector<IndexSpec> specs, std::vector<Value> operands, Loc loc) {
  size_t expected = 0;
  for (const IndexSpec& s : specs) expected += size_t(s.num_operands());
  SCANGEN_CHECK(expected == operands.size(), "index operand count");
  for (const Value& v : operands) check_scalar_int(v, "an index");
  Type t(x.type().dtype, index_result_shape(x.type(), specs, operands));
  std::vector<Value> inputs{std::move(x)};
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  return Value(make<IndexNode>(std::move(inputs), std::move(specs), std::move(t), loc));
}

Value Builder::update(Value x, Value v, std::vector<IndexSpec> specs, std::vector<Value> operands,
                      bool accumulate, Loc loc) {
  size_t expected = 0;
  for (const IndexSpec& s : specs) expected += size_t(s.num_operands());
  SCANGEN_CHECK(expected == operands.size(), "update operand count");
  SCANGEN_CHECK(x.type().dtype == v.type().dtype, "update value dtype");
  if (accumulate) SCANGEN_CHECK(x.type().dtype != DType::Bool, "inc on bool");
  for (const Value& o : operands) check_scalar_int(o, "an index");
  auto region = index_result_shape(x.type(), specs, operands);
  auto b = broadcast_shapes(v.type().shape, region);
  SCANGEN_CHECK(v.type().rank() <= int(region.size()) && b.has_value(), "update value does not fit the region");
  Type t = x.type();
  std::vector<Value> inputs{std::move(x), std::move(v)};
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  return Value(make<UpdateNode>(std::move(inputs), std::move(specs), accumulate, std::move(t), loc));
}

Value Builder::check_shape(Value x, std::vector<DimCheck> checks, std::vector<Value> operands,
                           std::string what, std::vector<Dim> static_shape, Loc loc) {
  SCANGEN_CHECK(int(checks.size()) == x.type().rank(), "check_shape rank");
  SCANGEN_CHECK(static_shape.size() == checks.size(), "check_shape static rank");
  for (const DimCheck& c : checks)
    if (c.kind == DimCheck::Kind::Operand)
      SCANGEN_CHECK(c.value >= 1 && size_t(c.value) <= operands.size(), "check_shape operand index");
  for (const Value& v : operands) check_scalar_int(v, "a checked dimension");
  Type t(x.type().dtype, std::move(static_shape));
  std::vector<Value> inputs{std::move(x)};
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  return Value(make<CheckShapeNode>(std::move(inputs), std::move(checks), std::move(what), std::move(t), loc));
}

Value Builder::reshape(Value x, std::vector<Value> dims, std::vector<Dim> static_dims, Loc loc, bool checked) {
  SCANGEN_CHECK(dims.size() == static_dims.size() && !dims.empty(), "reshape dims");
  for (size_t i = 0; i < dims.size(); ++i) {
    check_scalar_int(dims[i], "a reshape dimension");
    if (auto c = constant_value(dims[i])) static_dims[i] = Dim::constant(c->i);
    // A size taken from another value's shape is that dimension.
    if (const auto* d = dims[i].node->as<DimSizeNode>()) static_dims[i] = d->input(0).type().shape[size_t(d->axis())];
  }
  Type t(x.type().dtype, std::move(static_dims));
  std::vector<Value> inputs{std::move(x)};
  inputs.insert(inputs.end(), dims.begin(), dims.end());
  return Value(make<ReshapeNode>(std::move(inputs), checked, std::move(t), loc));
}

Value Builder::transpose(Value x, std::vector<int> perm, Loc loc) {
  SCANGEN_CHECK(int(perm.size()) == x.type().rank(), "transpose permutation rank");
  std::vector<bool> seen(perm.size(), false);
  for (int p : perm) {
    SCANGEN_CHECK(p >= 0 && size_t(p) < perm.size() && !seen[size_t(p)], "transpose permutation");
    seen[size_t(p)] = true;
  }
  Type t(x.type().dtype, transpose_shape(x.type().shape, perm));
  return Value(make<TransposeNode>(std::move(x), std::move(perm), std::move(t), loc));
}

Value Builder::gather(Value x, Value idx, Loc loc) {
  SCANGEN_CHECK(x.type().rank() >= 1, "gather from a scalar");
  SCANGEN_CHECK(is_int(idx.type().dtype), "gather index dtype");
  std::vector<Dim> shape = gather_shape(x.type().shape, idx.type().shape);
  SCANGEN_CHECK(shape.size() <= size_t(kMaxRank), "gather rank");
  Type t(x.type().dtype, std::move(shape));
  return Value(make<GatherNode>(std::move(x), std::move(idx), std::move(t), loc));
}

Value Builder::check_lengths(Value lengths, Value steps, Loc loc, LengthsBound bound) {
  SCANGEN_CHECK(lengths.type().dtype == DType::I64 && lengths.type().rank() == 1, "check_lengths: lengths are i64[B]");
  SCANGEN_CHECK(steps.type().dtype == DType::I64 && steps.type().is_scalar(), "check_lengths: steps is an i64 scalar");
  return Value(make<CheckLengthsNode>(std::move(lengths), std::move(steps), bound, loc));
}

Value Builder::check_offsets(Value offsets, std::optional<Value> rows, Loc loc) {
  SCANGEN_CHECK(offsets.type().dtype == DType::I64 && offsets.type().rank() == 1, "check_offsets: offsets are i64[B + 1]");
  std::vector<Value> inputs{std::move(offsets)};
  if (rows) {
    SCANGEN_CHECK(rows->type().dtype == DType::I64 && rows->type().is_scalar(), "check_offsets: rows is an i64 scalar");
    inputs.push_back(*rows);
  }
  return Value(make<CheckOffsetsNode>(std::move(inputs), loc));
}

Value Builder::scatter_add(Value x, Value idx, Value v, Loc loc) {
  SCANGEN_CHECK(x.type().rank() >= 1 && is_int(idx.type().dtype), "scatter_add operands");
  SCANGEN_CHECK(v.type().dtype == x.type().dtype && is_numeric(x.type().dtype), "scatter_add dtype");
  SCANGEN_CHECK(v.type().rank() == idx.type().rank() + x.type().rank() - 1, "scatter_add value rank");
  Type t = x.type();
  return Value(make<ScatterAddNode>(std::move(x), std::move(idx), std::move(v), std::move(t), loc));
}

Value Builder::arg_reduce(ReduceOp op, Value x, std::optional<int> axis, Loc loc) {
  SCANGEN_CHECK(op == ReduceOp::Max || op == ReduceOp::Min, "arg_reduce operator");
  SCANGEN_CHECK(is_numeric(x.type().dtype), "arg_reduce dtype");
  if (axis) SCANGEN_CHECK(*axis >= 0 && *axis < x.type().rank(), "arg_reduce axis");
  Type t(DType::I64, without_axis(x.type().shape, axis));
  return Value(make<ArgReduceNode>(op, std::move(x), axis, std::move(t), loc));
}

Value Builder::top_k(Value x, Value k, Dim k_dim, Loc loc) {
  SCANGEN_CHECK(x.type().rank() >= 1 && is_numeric(x.type().dtype), "top_k operand");
  check_scalar_int(k, "top_k's k");
  if (auto c = constant_value(k)) k_dim = Dim::constant(c->i);
  Type t(DType::I64, top_k_shape(x.type().shape, k_dim));
  return Value(make<TopKNode>(std::move(x), std::move(k), std::move(t), loc));
}

namespace {

void check_scan(const std::vector<Value>& inputs, const ScanInfo& info, const Graph& body) {
  SCANGEN_CHECK(int(inputs.size()) == info.num_inputs(), "scan input count");
  SCANGEN_CHECK(int(body.params.size()) == info.num_body_params(), "scan body param count");
  SCANGEN_CHECK(int(body.results.size()) == info.num_body_results(), "scan body result count");
  if (info.has_steps) check_scalar_int(inputs[0], "scan steps");
  SCANGEN_CHECK(body.params[0].type().is_scalar() && body.params[0].type().dtype == DType::I64, "scan index param");
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const Type& seq = inputs[size_t(info.sequence_input(int(s)))].type();
    SCANGEN_CHECK(seq.rank() >= 1 && !info.sequences[s].taps.empty(), "scan sequence");
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) {
      const Type& p = body.params[size_t(info.body_sequence_param(int(s), int(k)))].type();
      SCANGEN_CHECK(p.dtype == seq.dtype && p.rank() == seq.rank() - 1, "scan sequence tap type");
    }
  }
  for (size_t s = 0; s < info.states.size(); ++s) {
    const ScanState& st = info.states[s];
    const Type& init = inputs[size_t(info.init_input(int(s)))].type();
    const Type& next = body.results[s].type();
    SCANGEN_CHECK(init.dtype == next.dtype, "state " + st.name + " dtype");
    int expected_rank = next.rank() + (st.init_has_rows() ? 1 : 0);
    SCANGEN_CHECK(init.rank() == expected_rank, "state " + st.name + " init rank");
    for (size_t k = 0; k < st.lags.size(); ++k) {
      SCANGEN_CHECK(st.lags[k] >= 1 && (k == 0 || st.lags[k] > st.lags[k - 1]), "state lags sorted");
      const Type& p = body.params[size_t(info.body_state_param(int(s), int(k)))].type();
      SCANGEN_CHECK(p.dtype == next.dtype && p.rank() == next.rank(), "state tap type");
    }
  }
  for (int p = 0; p < info.num_params; ++p)
    SCANGEN_CHECK(inputs[size_t(info.param_input(p))].type().dtype ==
                      body.params[size_t(info.body_param(p))].type().dtype,
                  "scan param dtype");
  if (info.has_until) {
    const Type& c = body.results.back().type();
    SCANGEN_CHECK(c.is_scalar() && c.dtype == DType::Bool, "scan until must be a bool scalar");
  }
}

std::vector<Type> scan_output_types(const ScanInfo& info, const Graph& body, const Dim& steps) {
  std::vector<Type> out;
  for (int i = 0; i < info.num_outputs(); ++i) {
    // An output with a window has min(steps, window) rows.
    Dim rows = steps;
    if (int64_t w = info.window(i); w > 0)
      rows = steps.is_const() ? Dim::constant(std::min(*steps.const_value(), w)) : Dim::fresh_unknown();
    out.push_back(body.results[size_t(i)].type().stacked(rows));
  }
  return out;
}

}  // namespace

std::vector<Value> Builder::scan(std::vector<Value> inputs, ScanInfo info,
                                 std::shared_ptr<const Graph> body, Dim steps, Loc loc) {
  check_scan(inputs, info, *body);
  auto types = scan_output_types(info, *body, steps);
  NodeRef n = make<ScanNode>(std::move(inputs), std::move(info), std::move(body), std::move(types), loc);
  std::vector<Value> outs;
  for (int i = 0; i < n->num_outputs(); ++i) outs.push_back(n->output(i));
  return outs;
}

NodeRef Builder::rebuild_scan(const ScanNode& old, std::vector<Value> inputs, ScanInfo info,
                              std::shared_ptr<const Graph> body, std::optional<Dim> steps_override) {
  check_scan(inputs, info, *body);
  // The number of steps is the old one, unless the caller changed it (or the old outputs had
  // windows, which hide it).
  Dim steps = Dim::fresh_unknown();
  if (steps_override) {
    steps = *steps_override;
  } else if (old.num_outputs() > 0 && old.info().window(0) == 0) {
    steps = old.output_types()[0].shape[0];
  } else {
    for (int i = 0; i < old.num_outputs(); ++i)
      if (old.info().window(i) == 0) steps = old.output_types()[size_t(i)].shape[0];
  }
  auto types = scan_output_types(info, *body, steps);
  return make<ScanNode>(std::move(inputs), std::move(info), std::move(body), std::move(types), old.loc());
}

Value Builder::stop_gradient(Value x, Loc loc) { return Value(make<StopGradientNode>(std::move(x), loc)); }

NodeRef Builder::rebuild(const Node& old, std::vector<Value> inputs) {
  SCANGEN_CHECK(inputs.size() == old.inputs().size(), "rebuild with a different number of inputs");
  bool same_types = true;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].type().same_as(old.inputs()[i].type())) same_types = false;
  auto first = [&](size_t n) { return std::vector<Value>(inputs.begin() + long(n), inputs.end()); };

  if (same_types) {
    // Same operation, same operand types: keep the output types as they are.
    switch (old.kind()) {
      case NodeKind::Param:
      case NodeKind::Constant: return old.shared_from_this();
      case NodeKind::Arange: return make<ArangeNode>(inputs[0], inputs[1], old.output_types()[0], old.loc());
      case NodeKind::Fill: return make<FillNode>(std::move(inputs), old.output_types()[0], old.loc());
      case NodeKind::DimSize: return make<DimSizeNode>(inputs[0], old.as<DimSizeNode>()->axis(), old.loc());
      case NodeKind::Unary: return make<UnaryNode>(old.as<UnaryNode>()->op(), inputs[0], old.output_types()[0], old.loc());
      case NodeKind::Binary:
        return make<BinaryNode>(old.as<BinaryNode>()->op(), inputs[0], inputs[1], old.output_types()[0], old.loc());
      case NodeKind::Select: return make<SelectNode>(inputs[0], inputs[1], inputs[2], old.output_types()[0], old.loc());
      case NodeKind::Cast: return make<CastNode>(inputs[0], old.output_types()[0], old.loc());
      case NodeKind::Reduce: {
        const auto* r = old.as<ReduceNode>();
        return make<ReduceNode>(r->op(), inputs[0], r->axis(), old.output_types()[0], old.loc());
      }
      case NodeKind::MatMul: return make<MatMulNode>(inputs[0], inputs[1], old.output_types()[0], old.loc());
      case NodeKind::Index:
        return make<IndexNode>(std::move(inputs), old.as<IndexNode>()->specs(), old.output_types()[0], old.loc());
      case NodeKind::Update: {
        const auto* u = old.as<UpdateNode>();
        return make<UpdateNode>(std::move(inputs), u->specs(), u->accumulate(), old.output_types()[0], old.loc());
      }
      case NodeKind::CheckShape: {
        const auto* c = old.as<CheckShapeNode>();
        return make<CheckShapeNode>(std::move(inputs), c->checks(), c->what(), old.output_types()[0], old.loc());
      }
      case NodeKind::Reshape:
        return make<ReshapeNode>(std::move(inputs), old.as<ReshapeNode>()->checked(), old.output_types()[0], old.loc());
      case NodeKind::Transpose:
        return make<TransposeNode>(inputs[0], old.as<TransposeNode>()->perm(), old.output_types()[0], old.loc());
      case NodeKind::Gather: return make<GatherNode>(inputs[0], inputs[1], old.output_types()[0], old.loc());
      case NodeKind::ScatterAdd:
        return make<ScatterAddNode>(inputs[0], inputs[1], inputs[2], old.output_types()[0], old.loc());
      case NodeKind::ArgReduce: {
        const auto* r = old.as<ArgReduceNode>();
        return make<ArgReduceNode>(r->op(), inputs[0], r->axis(), old.output_types()[0], old.loc());
      }
      case NodeKind::TopK: return make<TopKNode>(inputs[0], inputs[1], old.output_types()[0], old.loc());
      case NodeKind::CheckLengths:
        return make<CheckLengthsNode>(inputs[0], inputs[1], old.as<CheckLengthsNode>()->bound(), old.loc());
      case NodeKind::CheckOffsets: return make<CheckOffsetsNode>(std::move(inputs), old.loc());
      case NodeKind::StopGradient: return make<StopGradientNode>(inputs[0], old.loc());
      case NodeKind::Call: {
        const auto* c = old.as<CallNode>();
        return make<CallNode>(c->import(), c->function_index(), std::move(inputs), old.output_types()[0], old.loc());
      }
      case NodeKind::Scan: {
        const auto* s = old.as<ScanNode>();
        return make<ScanNode>(std::move(inputs), s->info(), s->body_ptr(), old.output_types(), old.loc());
      }
    }
  }
  // Operand types changed: recompute through the checking factories.
  switch (old.kind()) {
    case NodeKind::Param:
    case NodeKind::Constant: return old.shared_from_this();
    case NodeKind::Arange: return arange(inputs[0], inputs[1], std::nullopt, old.loc()).node;
    case NodeKind::Fill: {
      std::vector<Dim> dims = old.output_types()[0].shape;
      return fill(inputs[0], first(1), std::move(dims), old.loc()).node;
    }
    case NodeKind::DimSize: return dim_size(inputs[0], old.as<DimSizeNode>()->axis(), old.loc()).node;
    case NodeKind::Unary: return unary(old.as<UnaryNode>()->op(), inputs[0], old.loc()).node;
    case NodeKind::Binary: return binary(old.as<BinaryNode>()->op(), inputs[0], inputs[1], old.loc()).node;
    case NodeKind::Select: return select(inputs[0], inputs[1], inputs[2], old.loc()).node;
    case NodeKind::Cast: return cast(inputs[0], old.output_types()[0].dtype, old.loc()).node;
    case NodeKind::Reduce: {
      const auto* r = old.as<ReduceNode>();
      return reduce(r->op(), inputs[0], r->axis(), old.loc()).node;
    }
    case NodeKind::MatMul: return matmul(inputs[0], inputs[1], old.loc()).node;
    case NodeKind::Index: return index(inputs[0], old.as<IndexNode>()->specs(), first(1), old.loc()).node;
    case NodeKind::Update: {
      const auto* u = old.as<UpdateNode>();
      return update(inputs[0], inputs[1], u->specs(), first(2), u->accumulate(), old.loc()).node;
    }
    case NodeKind::CheckShape: {
      const auto* c = old.as<CheckShapeNode>();
      return check_shape(inputs[0], c->checks(), first(1), c->what(), old.output_types()[0].shape, old.loc()).node;
    }
    case NodeKind::Reshape:
      return reshape(inputs[0], first(1), old.output_types()[0].shape, old.loc(), old.as<ReshapeNode>()->checked()).node;
    case NodeKind::Transpose: return transpose(inputs[0], old.as<TransposeNode>()->perm(), old.loc()).node;
    case NodeKind::Gather: return gather(inputs[0], inputs[1], old.loc()).node;
    case NodeKind::ScatterAdd: return scatter_add(inputs[0], inputs[1], inputs[2], old.loc()).node;
    case NodeKind::ArgReduce: {
      const auto* r = old.as<ArgReduceNode>();
      return arg_reduce(r->op(), inputs[0], r->axis(), old.loc()).node;
    }
    case NodeKind::TopK: return top_k(inputs[0], inputs[1], old.output_types()[0].shape.back(), old.loc()).node;
    case NodeKind::CheckLengths:
      return check_lengths(inputs[0], inputs[1], old.loc(), old.as<CheckLengthsNode>()->bound()).node;
    case NodeKind::CheckOffsets:
      return check_offsets(inputs[0], inputs.size() > 1 ? std::optional<Value>(inputs[1]) : std::nullopt, old.loc()).node;
    case NodeKind::StopGradient: return stop_gradient(inputs[0], old.loc()).node;
    case NodeKind::Call: {
      const auto* c = old.as<CallNode>();
      return call(c->import(), c->function_index(), std::move(inputs), old.loc()).node;
    }
    case NodeKind::Scan: {
      const auto* s = old.as<ScanNode>();
      return rebuild_scan(*s, std::move(inputs), s->info(), s->body_ptr());
    }
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

Value rows_after(Builder& b, const Value& before, int64_t count, const Value& rows, Loc loc) {
  std::vector<Value> dims;
  for (int i = 0; i < rows.type().rank(); ++i) dims.push_back(b.dim_size(rows, i, loc));
  std::vector<Dim> static_dims = rows.type().shape;
  dims[0] = b.binary(BinaryOp::Add, dims[0], b.int_constant(count, loc), loc);
  static_dims[0] = static_dims[0].plus(count);
  const DType d = rows.type().dtype;
  Value both = b.fill(b.constant(Scalar::zero(d), loc), dims, static_dims, loc);
  both = b.update(both, before, {IndexSpec{IndexSpec::Kind::Slice, true, true}},
                  {b.int_constant(0, loc), b.int_constant(count, loc)}, false, loc);
  return b.update(both, rows, {IndexSpec{IndexSpec::Kind::Slice, true, false}}, {b.int_constant(count, loc)}, false, loc);
}

Value flip_rows(Builder& b, const Value& x, Loc loc) {
  ScanInfo info;
  info.reverse = true;
  info.index_name = "row";
  info.sequences.push_back({{0}, "flip", {}});
  info.outputs.push_back("flipped");
  auto body = std::make_shared<Graph>();
  body->params.push_back(b.param(Type(DType::I64), 0, "row", loc));
  body->params.push_back(b.param(x.type().row(), 1, "x", loc));
  body->results.push_back(body->params[1]);
  return b.scan({x}, std::move(info), body, x.type().shape[0], loc)[0];
}

}  // namespace scangen::ir
