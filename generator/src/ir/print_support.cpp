#include "ir/print_support.h"

#include "ir/visitor.h"

namespace scangen::ir {
namespace {

std::pair<const void*, int> key(const Value& v) { return {v.node.get(), v.index}; }

class OperationText : public Visitor<std::string> {
 public:
  explicit OperationText(const ValueNames& names) : names_(names) {}

 protected:
  std::string visit_Param(const ParamNode&) override { SCANGEN_UNREACHABLE("a param is not an operation"); }
  std::string visit_Scan(const ScanNode&) override { SCANGEN_UNREACHABLE("each printer shows a scan its own way"); }
  std::string visit_Constant(const ConstantNode& n) override { return "const " + n.value().str(); }
  std::string visit_Arange(const ArangeNode& n) override { return "arange " + ref(n, 0) + ", " + ref(n, 1); }
  std::string visit_Fill(const FillNode& n) override { return "fill " + ref(n, 0) + ", " + operand_list(n, 1); }
  std::string visit_DimSize(const DimSizeNode& n) override {
    return "dim " + ref(n, 0) + ", " + std::to_string(n.axis());
  }
  std::string visit_Unary(const UnaryNode& n) override { return std::string(unary_op_name(n.op())) + " " + ref(n, 0); }
  std::string visit_Binary(const BinaryNode& n) override {
    return std::string(binary_op_name(n.op())) + " " + ref(n, 0) + ", " + ref(n, 1);
  }
  std::string visit_Select(const SelectNode& n) override {
    return "select " + ref(n, 0) + ", " + ref(n, 1) + ", " + ref(n, 2);
  }
  std::string visit_Cast(const CastNode& n) override { return "cast " + ref(n, 0); }
  std::string visit_Reduce(const ReduceNode& n) override {
    std::string s = std::string(reduce_op_name(n.op())) + " " + ref(n, 0);
    if (n.axis()) s += ", axis=" + std::to_string(*n.axis());
    return s;
  }
  std::string visit_MatMul(const MatMulNode& n) override { return "matmul " + ref(n, 0) + ", " + ref(n, 1); }
  std::string visit_Index(const IndexNode& n) override { return "index " + ref(n, 0) + indices(n, n.specs(), 1); }
  std::string visit_Update(const UpdateNode& n) override {
    return std::string(n.accumulate() ? "inc " : "set ") + ref(n, 0) + indices(n, n.specs(), 2) + " = " + ref(n, 1);
  }
  std::string visit_CheckShape(const CheckShapeNode& n) override {
    std::string s = "check_shape " + ref(n, 0) + ", [";
    for (size_t i = 0; i < n.checks().size(); ++i) {
      const DimCheck& c = n.checks()[i];
      if (i) s += ", ";
      if (c.kind == DimCheck::Kind::None) s += "_";
      if (c.kind == DimCheck::Kind::Const) s += "=" + std::to_string(c.value);
      if (c.kind == DimCheck::Kind::Operand) s += "=" + ref(n, int(c.value));
    }
    return s + "] \"" + n.what() + "\"";
  }
  std::string visit_Reshape(const ReshapeNode& n) override {
    return std::string(n.checked() ? "reshape checked " : "reshape ") + ref(n, 0) + ", " + operand_list(n, 1);
  }
  std::string visit_Transpose(const TransposeNode& n) override {
    std::string s = "transpose " + ref(n, 0) + ", perm=[";
    for (size_t i = 0; i < n.perm().size(); ++i) s += (i ? "," : "") + std::to_string(n.perm()[i]);
    return s + "]";
  }
  std::string visit_Gather(const GatherNode& n) override { return "gather " + ref(n, 0) + "[" + ref(n, 1) + "]"; }
  std::string visit_ScatterAdd(const ScatterAddNode& n) override {
    return "scatter_add " + ref(n, 0) + "[" + ref(n, 1) + "] += " + ref(n, 2);
  }
  std::string visit_ArgReduce(const ArgReduceNode& n) override {
    std::string s = std::string(n.op() == ReduceOp::Max ? "argmax " : "argmin ") + ref(n, 0);
    if (n.axis()) s += ", axis=" + std::to_string(*n.axis());
    return s;
  }
  std::string visit_TopK(const TopKNode& n) override { return "top_k " + ref(n, 0) + ", " + ref(n, 1); }
  std::string visit_CheckLengths(const CheckLengthsNode& n) override {
    return "check_lengths " + ref(n, 0) + (n.bound() == LengthsBound::Rows ? " rows " : " steps ") + ref(n, 1);
  }
  std::string visit_CheckOffsets(const CheckOffsetsNode& n) override {
    return "check_offsets " + ref(n, 0) + (n.num_inputs() > 1 ? " rows " + ref(n, 1) : "");
  }
  std::string visit_StopGradient(const StopGradientNode& n) override { return "stop_gradient " + ref(n, 0); }
  std::string visit_Call(const CallNode& n) override {
    std::string s = "call @" + n.function().name + "(";
    for (int i = 0; i < n.num_inputs(); ++i) s += (i ? ", " : "") + ref(n, i);
    return s + ")";
  }

 private:
  std::string ref(const Node& n, int input) const { return names_.ref(n.input(input)); }

  // "[%1, %2]": the operands from `first` on.
  std::string operand_list(const Node& n, int first) const {
    std::string s;
    for (int i = first; i < n.num_inputs(); ++i) s += (i > first ? ", " : "") + ref(n, i);
    return "[" + s + "]";
  }

  std::string indices(const Node& n, const std::vector<IndexSpec>& specs, int first_operand) const {
    std::string s = "[";
    int op = first_operand;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (i) s += ", ";
      if (specs[i].kind == IndexSpec::Kind::Scalar) {
        s += ref(n, op++);
        continue;
      }
      if (specs[i].has_lo) s += ref(n, op++);
      s += ":";
      if (specs[i].has_hi) s += ref(n, op++);
    }
    return s + "]";
  }

  const ValueNames& names_;
};

}  // namespace

std::string ValueNames::unique(const std::string& base) {
  std::string clean;
  for (char c : base)
    if (c != ' ') clean += c;
  int& count = used_names_[clean];
  ++count;
  return count == 1 ? clean : clean + "." + std::to_string(count);
}

void ValueNames::name_params(const Graph& g) {
  for (const Value& p : g.params) {
    const auto* param = p.node ? p.node->as<ParamNode>() : nullptr;
    names_[key(p)] = "%" + unique(param ? param->name() : "?");
  }
}

void ValueNames::name_param(const ParamNode& p) { names_[key(p.output(0))] = "%" + unique(p.name()); }

void ValueNames::name_outputs(const Node& n, int id) {
  if (n.num_outputs() == 1) {
    names_[key(n.output(0))] = "%" + std::to_string(id);
    return;
  }
  const auto* scan = n.as<ScanNode>();
  for (int i = 0; i < n.num_outputs(); ++i)
    names_[key(n.output(i))] = "%" + std::to_string(id) + "#" + (scan ? scan->info().output_name(i) : std::to_string(i));
}

std::string ValueNames::ref(const Value& v) const {
  auto it = names_.find(key(v));
  return it == names_.end() ? "%<undefined>" : it->second;
}

std::string ValueNames::param_list(const Graph& g) const {
  std::string s;
  for (size_t i = 0; i < g.params.size(); ++i) s += (i ? ", " : "") + ref(g.params[i]) + ": " + g.params[i].type().str();
  return s;
}

std::string int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string function_header(const Function& f, const ValueNames& names) {
  std::string s = "fn " + f.name + "(" + names.param_list(f.graph) + ") -> ";
  if (f.tuple_result) s += "(";
  for (size_t i = 0; i < f.results.size(); ++i) {
    if (i) s += ", ";
    if (!f.results[i].name.empty()) s += f.results[i].name + ": ";
    s += f.results[i].type.str();
  }
  if (f.tuple_result) s += ")";
  return s;
}

std::string operation_text(const Node& n, const ValueNames& names) { return OperationText(names).visit(n); }

}  // namespace scangen::ir
