#include "ir/verifier.h"

#include <unordered_set>

#include "ir/assoc.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace scangen::ir {
namespace {

class Verifier : public Visitor<void> {
 public:
  explicit Verifier(const Graph& g) : graph_(g) {
    for (size_t i = 0; i < g.params.size(); ++i) {
      const auto* p = g.params[i].node ? g.params[i].node->as<ParamNode>() : nullptr;
      require(p && p->index() == int(i), "graph param " + std::to_string(i) + " is not ParamNode #" + std::to_string(i));
      params_.insert(p);
    }
  }

  void run() {
    for (const Value& r : graph_.results) require(bool(r.node), "a graph result is null");
    for (const Node* n : topological_order(graph_)) {
      current_ = n;
      for (const Value& in : n->inputs())
        require(in.node && in.index >= 0 && in.index < in.node->num_outputs(), "an operand is not a value");
      visit(*n);
    }
  }

 protected:
  void visit_Param(const ParamNode& n) override {
    require(params_.count(&n) > 0, "param '" + n.name() + "' does not belong to this graph");
  }
  void visit_Constant(const ConstantNode& n) override { require(type(n).is_scalar(), "constant is not a scalar"); }
  void visit_Arange(const ArangeNode& n) override {
    inputs(n, 2);
    for (const Value& v : n.inputs()) require(is_i64_scalar(v), "arange bounds must be i64 scalars");
    require(type(n).dtype == DType::I64 && type(n).rank() == 1, "arange gives i64[n]");
  }
  void visit_Fill(const FillNode& n) override {
    require(n.num_inputs() >= 1 && n.input(0).type().is_scalar(), "fill value must be a scalar");
    require(n.input(0).type().dtype == type(n).dtype, "fill value dtype");
    require(type(n).rank() == n.num_inputs() - 1, "fill rank");
    for (int i = 1; i < n.num_inputs(); ++i) require(is_i64_scalar(n.input(i)), "fill dims must be i64 scalars");
  }
  void visit_DimSize(const DimSizeNode& n) override {
    inputs(n, 1);
    require(n.axis() >= 0 && n.axis() < n.input(0).type().rank(), "dim axis out of range");
    require(is_i64_scalar(n.output(0)), "dim gives i64");
  }
  void visit_Unary(const UnaryNode& n) override {
    inputs(n, 1);
    require(type(n).dtype == n.input(0).type().dtype && type(n).rank() == n.input(0).type().rank(), "unary type");
  }
  void visit_Binary(const BinaryNode& n) override {
    inputs(n, 2);
    require(n.input(0).type().dtype == n.input(1).type().dtype, "binary operand dtypes differ");
    DType want = binary_op_class(n.op()) == BinaryClass::Arith ? n.input(0).type().dtype : DType::Bool;
    require(type(n).dtype == want, "binary result dtype");
    require(type(n).rank() == std::max(n.input(0).type().rank(), n.input(1).type().rank()), "binary result rank");
  }
  void visit_Select(const SelectNode& n) override {
    inputs(n, 3);
    require(n.input(0).type().dtype == DType::Bool, "select condition must be bool");
    require(n.input(1).type().dtype == type(n).dtype && n.input(2).type().dtype == type(n).dtype, "select dtypes");
  }
  void visit_Cast(const CastNode& n) override {
    inputs(n, 1);
    require(type(n).rank() == n.input(0).type().rank(), "cast keeps the shape");
  }
  void visit_Reduce(const ReduceNode& n) override {
    inputs(n, 1);
    require(type(n).dtype == n.input(0).type().dtype, "reduce keeps the dtype");
    int want = n.axis() ? n.input(0).type().rank() - 1 : 0;
    require(type(n).rank() == want, "reduce result rank");
  }
  void visit_MatMul(const MatMulNode& n) override {
    inputs(n, 2);
    require(matmul_result_shape(n.input(0).type(), n.input(1).type()).has_value(), "matmul shapes");
  }
  void visit_Index(const IndexNode& n) override {
    int ops = 1;
    for (const IndexSpec& s : n.specs()) ops += s.num_operands();
    inputs(n, ops);
    require(int(n.specs().size()) <= n.input(0).type().rank(), "more indices than dimensions");
    for (int i = 1; i < n.num_inputs(); ++i) require(is_i64_scalar(n.input(i)), "index operands must be i64 scalars");
    require(type(n).rank() == int(index_result_shape(n.input(0).type(), n.specs(), {n.inputs().begin() + 1, n.inputs().end()}).size()),
            "index result rank");
  }
  void visit_Update(const UpdateNode& n) override {
    int ops = 2;
    for (const IndexSpec& s : n.specs()) ops += s.num_operands();
    inputs(n, ops);
    require(type(n).same_as(n.input(0).type()) || type(n).rank() == n.input(0).type().rank(), "update keeps the type");
    require(n.input(1).type().dtype == type(n).dtype, "update value dtype");
  }
  void visit_CheckShape(const CheckShapeNode& n) override {
    require(n.num_inputs() >= 1, "check_shape operand");
    require(int(n.checks().size()) == n.input(0).type().rank() && type(n).rank() == n.input(0).type().rank(), "check_shape rank");
    for (const DimCheck& c : n.checks())
      if (c.kind == DimCheck::Kind::Operand)
        require(c.value >= 1 && c.value < n.num_inputs() && is_i64_scalar(n.input(int(c.value))), "check_shape operand");
  }
  void visit_Reshape(const ReshapeNode& n) override {
    require(n.num_inputs() >= 2 && type(n).rank() == n.num_inputs() - 1, "reshape rank");
    require(type(n).dtype == n.input(0).type().dtype, "reshape keeps the dtype");
    for (int i = 1; i < n.num_inputs(); ++i) require(is_i64_scalar(n.input(i)), "reshape dims must be i64 scalars");
  }
  void visit_Transpose(const TransposeNode& n) override {
    inputs(n, 1);
    require(int(n.perm().size()) == n.input(0).type().rank() && type(n).rank() == n.input(0).type().rank(),
            "transpose rank");
    require(type(n).dtype == n.input(0).type().dtype, "transpose keeps the dtype");
  }
  void visit_Gather(const GatherNode& n) override {
    inputs(n, 2);
    require(n.input(0).type().rank() >= 1 && is_int(n.input(1).type().dtype), "gather operands");
    require(type(n).rank() == n.input(1).type().rank() + n.input(0).type().rank() - 1, "gather rank");
  }
  void visit_CheckLengths(const CheckLengthsNode& n) override {
    inputs(n, 2);
    require(type(n).same_as(n.input(0).type()) && type(n).dtype == DType::I64 && type(n).rank() == 1,
            "check_lengths keeps its i64[B] lengths");
    require(is_i64_scalar(n.input(1)), "check_lengths steps must be an i64 scalar");
  }
  void visit_CheckOffsets(const CheckOffsetsNode& n) override {
    require(n.num_inputs() == 1 || n.num_inputs() == 2, "check_offsets takes offsets and maybe rows");
    require(type(n).same_as(n.input(0).type()) && type(n).dtype == DType::I64 && type(n).rank() == 1,
            "check_offsets keeps its i64[B + 1] offsets");
    require(n.num_inputs() == 1 || is_i64_scalar(n.input(1)), "check_offsets rows must be an i64 scalar");
  }
  void visit_ScatterAdd(const ScatterAddNode& n) override {
    inputs(n, 3);
    require(type(n).same_as(n.input(0).type()) && n.input(2).type().dtype == type(n).dtype, "scatter_add types");
    require(is_int(n.input(1).type().dtype), "scatter_add index dtype");
  }
  void visit_ArgReduce(const ArgReduceNode& n) override {
    inputs(n, 1);
    require(type(n).dtype == DType::I64, "arg_reduce gives i64");
    require(n.op() == ReduceOp::Max || n.op() == ReduceOp::Min, "arg_reduce is argmax or argmin");
  }
  void visit_TopK(const TopKNode& n) override {
    inputs(n, 2);
    require(type(n).dtype == DType::I64 && type(n).rank() == n.input(0).type().rank(), "top_k result type");
    require(is_i64_scalar(n.input(1)), "top_k's k is an i64 scalar");
  }
  void visit_Call(const CallNode& n) override {
    const ImportedFunction& f = n.function();
    inputs(n, int(f.params.size()));
    int rank = 0;
    for (int i = 0; i < n.num_inputs(); ++i) {
      require(n.input(i).type().dtype == f.params[size_t(i)], "call argument dtype differs from its parameter's");
      rank = std::max(rank, n.input(i).type().rank());
    }
    require(type(n).dtype == f.result && type(n).rank() == rank, "call result type");
  }
  void visit_StopGradient(const StopGradientNode& n) override {
    require(n.num_inputs() == 1 && type(n).same_as(n.input(0).type()), "stop_gradient passes its operand through");
  }
  void visit_Scan(const ScanNode& n) override {
    const ScanInfo& info = n.info();
    require(n.num_inputs() == info.num_inputs(), "scan input count");
    const Graph& body = n.body();
    require(int(body.params.size()) == info.num_body_params(), "scan body param count");
    require(int(body.results.size()) == info.num_body_results(), "scan body result count");
    require(n.num_outputs() == info.num_outputs(), "scan output count");
    for (int i = 0; i < info.num_outputs(); ++i) {
      const Type& out = n.output_types()[size_t(i)];
      const Type& step = body.results[size_t(i)].type();
      require(out.dtype == step.dtype && out.rank() == step.rank() + 1, "scan output " + info.output_name(i) + " type");
    }
    for (size_t s = 0; s < info.states.size(); ++s) {
      const ScanState& st = info.states[s];
      const Type& init = n.input(info.init_input(int(s))).type();
      const Type& step = body.results[s].type();
      require(init.dtype == step.dtype && init.rank() == step.rank() + (st.init_has_rows() ? 1 : 0),
              "init of state " + st.name);
      // The caller's buffers are read-only.
      if (st.init_in_place)
        require(step.rank() >= 1 && n.input(info.init_input(int(s))).node->kind() != NodeKind::Param,
                "state " + st.name + " is in place but its init is an argument or a scalar");
      for (size_t k = 0; k < st.lags.size(); ++k)
        require(st.lags[k] >= 1 && (k == 0 || st.lags[k] > st.lags[k - 1]), "state lags must be sorted and >= 1");
    }
    for (const auto& [name, rows] : info.windows) {
      bool known = false;
      for (int i = 0; i < info.num_outputs(); ++i) known = known || info.output_name(i) == name;
      require(known && rows >= 1, "window of an unknown output or of no rows: " + name);
    }
    for (const ScanSequence& seq : info.sequences) {
      require(!seq.taps.empty(), "a sequence without taps");
      for (size_t k = 1; k < seq.taps.size(); ++k) require(seq.taps[k] > seq.taps[k - 1], "sequence taps sorted");
    }
    if (info.has_steps) require(is_i64_scalar(n.input(info.steps_input())), "scan steps must be i64");
    require(info.has_steps || !info.sequences.empty(), "a scan without steps or sequences");
    if (info.has_until) {
      const Type& c = body.results.back().type();
      require(c.is_scalar() && c.dtype == DType::Bool, "until must be a bool scalar");
    }
    if (info.assoc) {
      require(info.states.size() == 1 && info.outputs.empty() && !info.has_until,
              "an associative scan (assoc=" + std::string(assoc_op_name(*info.assoc)) + ") has one state and nothing else");
      std::string why;
      std::optional<AssocStep> step = match_assoc_step(info, body, 0, &why);
      require(step && step->op == *info.assoc,
              "the step of an associative scan is not its operator " + std::string(assoc_op_name(*info.assoc)) + ": " +
                  (step ? std::string("it is ") + assoc_op_name(step->op) : why));
    }
    for (int p = 0; p < info.num_params; ++p)
      require(n.input(info.param_input(p)).type().dtype == body.params[size_t(info.body_param(p))].type().dtype,
              "scan param dtype");
    verify(body);
  }

 private:
  static const Type& type(const Node& n) { return n.output_types()[0]; }
  static bool is_i64_scalar(const Value& v) { return v.type().is_scalar() && v.type().dtype == DType::I64; }
  void inputs(const Node& n, int count) {
    require(n.num_inputs() == count, std::string(node_kind_name(n.kind())) + " takes " + std::to_string(count) + " operands");
  }
  void require(bool ok, const std::string& what) {
    if (ok) return;
    std::string where = current_ ? std::string(" at node '") + node_kind_name(current_->kind()) + "'" : "";
    throw InternalError("IR verification failed" + where + ": " + what + "\n" + print_graph(graph_));
  }

  const Graph& graph_;
  std::unordered_set<const Node*> params_;
  const Node* current_ = nullptr;
};

}  // namespace

void verify(const Graph& g) { Verifier(g).run(); }

void verify(const Function& f) {
  if (f.graph.params.size() != f.args.size())
    throw InternalError("IR verification failed: function '" + f.name + "' has a param count different from its args");
  for (size_t i = 0; i < f.args.size(); ++i)
    if (f.graph.params[i].type().dtype != f.args[i].type.dtype || f.graph.params[i].type().rank() != f.args[i].type.rank())
      throw InternalError("IR verification failed: param " + std::to_string(i) + " of '" + f.name + "' differs from its declaration");
  if (f.graph.results.size() != f.results.size())
    throw InternalError("IR verification failed: function '" + f.name + "' returns a different number of results than declared");
  verify(f.graph);
}

void verify(const Program& p) {
  for (const Function& f : p.functions) verify(f);
}

}  // namespace scangen::ir
