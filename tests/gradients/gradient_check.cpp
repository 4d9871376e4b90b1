#include "gradient_check.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "autodiff/gradients.h"
#include "autodiff/rules.h"
#include "interpreter/interpreter.h"
#include "ir/mutator.h"

namespace scangen::gradcheck {

using ir::Value;

namespace {

DType promoted(DType d) { return d == DType::F32 ? DType::F64 : d; }
ir::Type promoted(const ir::Type& t) { return t.with_dtype(promoted(t.dtype)); }

class F64Promoter : public ir::Mutator {
 public:
  ir::Graph promote(const ir::Graph& g) {
    ir::Graph out;
    for (const Value& p : g.params) out.params.push_back(mutate(p));
    for (const Value& r : g.results) out.results.push_back(mutate(r));
    return out;
  }

 protected:
  std::vector<Value> visit_Param(const ir::ParamNode& n, std::vector<Value>) override {
    return {builder.param(promoted(n.output_types()[0]), n.index(), n.name(), n.loc())};
  }
  std::vector<Value> visit_Constant(const ir::ConstantNode& n, std::vector<Value> inputs) override {
    if (n.value().dtype != DType::F32) return keep_or_rebuild(n, std::move(inputs));
    return {builder.constant(ir::Scalar::of_float(DType::F64, n.value().f), n.loc())};
  }
  std::vector<Value> visit_Cast(const ir::CastNode& n, std::vector<Value> inputs) override {
    return {builder.cast(inputs[0], promoted(n.output_types()[0].dtype), n.loc())};
  }
  // An imported function keeps its C++ signature: its promoted arguments are converted back to
  // its parameters' dtypes and its result promoted.
  std::vector<Value> visit_Call(const ir::CallNode& n, std::vector<Value> inputs) override {
    const ir::ImportedFunction& f = n.function();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].type().dtype != f.params[i]) inputs[i] = builder.cast(inputs[i], f.params[i], n.loc());
    Value r = builder.call(n.import(), n.function_index(), std::move(inputs), n.loc());
    return {r.type().dtype == promoted(f.result) ? r : builder.cast(r, promoted(f.result), n.loc())};
  }
  std::vector<Value> visit_Scan(const ir::ScanNode& n, std::vector<Value> inputs) override {
    F64Promoter inner;
    auto body = std::make_shared<ir::Graph>(inner.promote(n.body()));
    ir::ScanInfo info = n.info();
    info.truncate_gradient = -1;  // truncation changes the derivative on purpose
    ir::NodeRef node = builder.rebuild_scan(n, std::move(inputs), info, body);
    std::vector<Value> outs;
    for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(node->output(i));
    return outs;
  }
};

// Weights of a result's elements in the cost: cos(1.3 p + k + 1) at flat position p of result k.
Value weighted_sum(ir::Builder& b, const Value& r, int k) {
  Loc loc;
  auto f64 = [&](double v) { return b.constant(ir::Scalar::of_float(DType::F64, v), loc); };
  Value x = b.cast(r, DType::F64, loc);
  if (x.type().is_scalar()) return b.binary(ir::BinaryOp::Mul, x, f64(std::cos(k + 1.0)), loc);
  Value count = b.int_constant(1, loc);
  std::vector<Value> dims;
  for (int i = 0; i < x.type().rank(); ++i) {
    dims.push_back(b.dim_size(x, i, loc));
    count = b.binary(ir::BinaryOp::Mul, count, dims.back(), loc);
  }
  Value pos = b.reshape(b.arange(b.int_constant(0, loc), count, std::nullopt, loc), dims, x.type().shape, loc);
  Value angle = b.binary(ir::BinaryOp::Add, b.binary(ir::BinaryOp::Mul, b.cast(pos, DType::F64, loc), f64(1.3), loc),
                         f64(k + 1.0), loc);
  Value w = b.unary(ir::UnaryOp::Cos, angle, loc);
  return b.reduce(ir::ReduceOp::Sum, b.binary(ir::BinaryOp::Mul, x, w, loc), std::nullopt, loc);
}

}  // namespace

ir::Function promote_to_f64(const ir::Function& f) {
  ir::Function out = f;
  for (auto& a : out.args) a.type = promoted(a.type);
  for (auto& r : out.results) r.type = promoted(r.type);
  F64Promoter p;
  out.graph = p.promote(f.graph);
  return out;
}

std::optional<GradientFunctions> gradient_functions(const ir::Function& f, const std::string& name) {
  ir::Function p = promote_to_f64(f);
  ir::Builder b;
  Value cost;
  for (size_t k = 0; k < p.graph.results.size(); ++k) {
    const Value& r = p.graph.results[k];
    if (!is_float(r.type().dtype)) continue;
    Value part = weighted_sum(b, r, int(k));
    cost = cost ? b.binary(ir::BinaryOp::Add, cost, part, Loc{}) : part;
  }
  GradientFunctions g;
  std::vector<Value> wrt;
  for (size_t i = 0; i < p.args.size(); ++i)
    if (is_float(p.args[i].type.dtype)) g.float_args.push_back(int(i)), wrt.push_back(p.graph.params[i]);
  if (!cost || wrt.empty()) return std::nullopt;

  g.cost = p;
  g.cost.name = name + "_cost";
  g.cost.results = {{"cost", ir::Type(DType::F64), Loc{}}};
  g.cost.tuple_result = false;
  g.cost.graph.results = {cost};

  g.gradient = g.cost;
  g.gradient.name = name;
  g.gradient.tuple_result = true;
  for (int i : g.float_args) g.gradient.results.push_back({"d_" + p.args[size_t(i)].name, p.args[size_t(i)].type, Loc{}});
  try {
    for (const Value& d : autodiff::gradients(b, cost, wrt, Loc{})) g.gradient.graph.results.push_back(d);
  } catch (const autodiff::MissingPartial&) {
    return std::nullopt;  // an imported function without the derivative the gradient needs
  }
  return g;
}

std::vector<HostTensor> promote_arguments(const std::vector<HostTensor>& args) {
  std::vector<HostTensor> out;
  for (const HostTensor& a : args) {
    if (a.dtype() != DType::F32) {
      out.push_back(a);
      continue;
    }
    HostTensor t(DType::F64, a.shape());
    for (int64_t i = 0; i < a.numel(); ++i) t.data<double>()[i] = a.get_as_double(i);
    out.push_back(t);
  }
  return out;
}

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::string compare_with_finite_differences(const GradientFunctions& g, const std::vector<HostTensor>& args,
                                            const std::vector<HostTensor>& gradient_results, ElementCounts& counts) {
  interp::Interpreter interp;
  const double cost = gradient_results.at(0).get_as_double(0);
  auto cost_at = [&](size_t arg, int64_t element, double x) {
    std::vector<HostTensor> moved = args;
    moved[arg] = args[arg].clone();
    moved[arg].data<double>()[element] = x;
    return interp.run(g.cost, moved).at(0).get_as_double(0);
  };
  auto central = [&](size_t arg, int64_t element, double x, double h) -> double {
    return (cost_at(arg, element, x + h) - cost_at(arg, element, x - h)) / (2 * h);
  };
  std::ostringstream diff;
  for (size_t k = 0; k < g.float_args.size(); ++k) {
    size_t arg = size_t(g.float_args[k]);
    const HostTensor& grad = gradient_results.at(k + 1);
    for (int64_t e = 0; e < args[arg].numel(); ++e) {
      double x = args[arg].data<double>()[e];
      double h = 1e-4 * std::max(1.0, std::fabs(x));
      double above = cost_at(arg, e, x + h), below = cost_at(arg, e, x - h);
      double fd = (above - below) / (2 * h), fd_half = central(arg, e, x, h / 2);
      double scale = std::max({1.0, std::fabs(fd), std::fabs(fd_half)});
      // Smooth here: the two central differences agree, and so do the one-sided slopes (a kink,
      // a tie of max/min or a jump at exactly x shows in them even when it is symmetric).
      double right = (above - cost) / h, left = (cost - below) / h;
      bool smooth = std::isfinite(fd) && std::isfinite(fd_half) && std::fabs(fd - fd_half) <= 1e-5 * scale &&
                    std::fabs(right - left) <= 1e-2 * std::max({1.0, std::fabs(right), std::fabs(left)});
      if (!smooth) {
        ++counts.not_smooth;
        continue;
      }
      double got = grad.get_as_double(e);
      double tolerance = 1e-5 * std::max(scale, std::fabs(got)) + 1e-9 * std::max(1.0, std::fabs(cost)) / h;
      if (!(std::fabs(got - fd) <= tolerance)) {
        diff << "  d cost / d " << g.cost.args[arg].name << "[" << e << "] = " << got << ", finite difference "
             << fd << "\n";
        continue;
      }
      ++counts.checked;
    }
  }
  return diff.str();
}

}  // namespace scangen::gradcheck
