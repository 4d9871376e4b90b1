#include "ir/printer.h"

#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ir/visitor.h"

namespace scangen::ir {
namespace {

class Printer : public Visitor<void> {
 public:
  explicit Printer(std::ostringstream& os) : os_(os) {}

  void print_graph_body(const Graph& g, int indent) {
    for (const Node* n : topological_order(g)) {
      if (n->kind() == NodeKind::Param) continue;
      indent_ = indent;
      name_outputs(*n);
      visit(*n);
    }
  }

  void name_params(const Graph& g) {
    for (const Value& p : g.params) names_[key(p)] = "%" + unique(p.node->as<ParamNode>()->name());
  }

  std::string ref(const Value& v) {
    auto it = names_.find(key(v));
    return it == names_.end() ? "%<undefined>" : it->second;
  }

  std::string param_list(const Graph& g) {
    std::string s;
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (i) s += ", ";
      s += ref(g.params[i]) + ": " + g.params[i].type().str();
    }
    return s;
  }

 protected:
  void visit_Param(const ParamNode&) override {}
  void visit_Constant(const ConstantNode& n) override { line(n, "const " + n.value().str()); }
  void visit_Arange(const ArangeNode& n) override { line(n, "arange " + ref(n.input(0)) + ", " + ref(n.input(1))); }
  void visit_Fill(const FillNode& n) override {
    std::string dims;
    for (int i = 1; i < n.num_inputs(); ++i) dims += (i > 1 ? ", " : "") + ref(n.input(i));
    line(n, "fill " + ref(n.input(0)) + ", [" + dims + "]");
  }
  void visit_DimSize(const DimSizeNode& n) override {
    line(n, "dim " + ref(n.input(0)) + ", " + std::to_string(n.axis()));
  }
  void visit_Unary(const UnaryNode& n) override { line(n, std::string(unary_op_name(n.op())) + " " + ref(n.input(0))); }
  void visit_Binary(const BinaryNode& n) override {
    line(n, std::string(binary_op_name(n.op())) + " " + ref(n.input(0)) + ", " + ref(n.input(1)));
  }
  void visit_Select(const SelectNode& n) override {
    line(n, "select " + ref(n.input(0)) + ", " + ref(n.input(1)) + ", " + ref(n.input(2)));
  }
  void visit_Cast(const CastNode& n) override { line(n, "cast " + ref(n.input(0))); }
  void visit_Reduce(const ReduceNode& n) override {
    std::string s = std::string(reduce_op_name(n.op())) + " " + ref(n.input(0));
    if (n.axis()) s += ", axis=" + std::to_string(*n.axis());
    line(n, s);
  }
  void visit_MatMul(const MatMulNode& n) override { line(n, "matmul " + ref(n.input(0)) + ", " + ref(n.input(1))); }
  void visit_Index(const IndexNode& n) override { line(n, "index " + ref(n.input(0)) + indices(n, n.specs(), 1)); }
  void visit_Update(const UpdateNode& n) override {
    line(n, std::string(n.accumulate() ? "inc " : "set ") + ref(n.input(0)) + indices(n, n.specs(), 2) + " = " +
                ref(n.input(1)));
  }
  void visit_CheckShape(const CheckShapeNode& n) override {
    std::string s = "check_shape " + ref(n.input(0)) + ", [";
    for (size_t i = 0; i < n.checks().size(); ++i) {
      const DimCheck& c = n.checks()[i];
      if (i) s += ", ";
      if (c.kind == DimCheck::Kind::None) s += "_";
      if (c.kind == DimCheck::Kind::Const) s += "=" + std::to_string(c.value);
      if (c.kind == DimCheck::Kind::Operand) s += "=" + ref(n.input(int(c.value)));
    }
    line(n, s + "] \"" + n.what() + "\"");
  }
  void visit_Reshape(const ReshapeNode& n) override {
    std::string dims;
    for (int i = 1; i < n.num_inputs(); ++i) dims += (i > 1 ? ", " : "") + ref(n.input(i));
    line(n, "reshape " + ref(n.input(0)) + ", [" + dims + "]");
  }
  void visit_Scan(const ScanNode& n) override {
    const ScanInfo& info = n.info();
    std::string s = "scan";
    if (info.has_steps) s += " steps=" + ref(n.input(info.steps_input()));
    if (info.reverse) s += " reverse";
    if (info.has_until) s += " until";
    if (info.truncate_gradient != -1) s += " truncate_gradient=" + std::to_string(info.truncate_gradient);
    if (!info.sequences.empty()) {
      s += " sequences(";
      for (size_t i = 0; i < info.sequences.size(); ++i) {
        if (i) s += ", ";
        s += ref(n.input(info.sequence_input(int(i)))) + " taps " + list(info.sequences[i].taps);
      }
      s += ")";
    }
    if (!info.states.empty()) {
      s += " states(";
      for (size_t i = 0; i < info.states.size(); ++i) {
        if (i) s += ", ";
        s += info.states[i].name + ": init " + ref(n.input(info.init_input(int(i)))) + " lags " +
             list(info.states[i].lags) + (info.states[i].init_in_place ? " in-place" : "");
      }
      s += ")";
    }
    if (!info.outputs.empty()) {
      s += " outputs(";
      for (size_t i = 0; i < info.outputs.size(); ++i) s += (i ? ", " : "") + info.outputs[i];
      s += ")";
    }
    if (!info.windows.empty()) {
      s += " windows(";
      bool first = true;
      for (const auto& [name, rows] : info.windows) {
        s += (first ? "" : ", ") + name + ": " + std::to_string(rows);
        first = false;
      }
      s += ")";
    }
    if (info.num_params > 0) {
      s += " params(";
      for (int i = 0; i < info.num_params; ++i) s += (i ? ", " : "") + ref(n.input(info.param_input(i)));
      s += ")";
    }
    line(n, s + " {");
    const Graph& body = n.body();
    int saved = indent_;
    name_params(body);
    pad(saved);
    os_ << "^step(" << param_list(body) << "):\n";
    print_graph_body(body, saved + 2);
    pad(saved + 2);
    os_ << "yield ";
    for (int i = 0; i < info.num_outputs(); ++i)
      os_ << (i ? ", " : "") << info.output_name(i) << "=" << ref(body.results[size_t(i)]);
    if (info.has_until) os_ << (info.num_outputs() ? ", " : "") << "until=" << ref(body.results.back());
    os_ << "\n";
    pad(saved);
    os_ << "}\n";
    indent_ = saved;
  }

 private:
  static std::pair<const void*, int> key(const Value& v) { return {v.node.get(), v.index}; }

  std::string unique(const std::string& base) {
    std::string clean;
    for (char c : base)
      if (c != ' ') clean += c;
    int& count = used_names_[clean];
    ++count;
    return count == 1 ? clean : clean + "." + std::to_string(count);
  }

  void name_outputs(const Node& n) {
    int id = next_id_++;
    if (n.num_outputs() == 1) {
      names_[key(n.output(0))] = "%" + std::to_string(id);
      return;
    }
    const auto* scan = n.as<ScanNode>();
    for (int i = 0; i < n.num_outputs(); ++i)
      names_[key(n.output(i))] =
          "%" + std::to_string(id) + "#" + (scan ? scan->info().output_name(i) : std::to_string(i));
  }

  void pad(int indent) { os_ << std::string(size_t(indent), ' '); }

  void line(const Node& n, const std::string& text) {
    pad(indent_);
    if (n.num_outputs() == 1) {
      os_ << ref(n.output(0)) << ": " << n.output_types()[0].str() << " = " << text << "\n";
      return;
    }
    os_ << "(";
    for (int i = 0; i < n.num_outputs(); ++i)
      os_ << (i ? ", " : "") << ref(n.output(i)) << ": " << n.output_types()[size_t(i)].str();
    os_ << ") = " << text << "\n";
  }

  std::string indices(const Node& n, const std::vector<IndexSpec>& specs, int first_operand) {
    std::string s = "[";
    int op = first_operand;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (i) s += ", ";
      if (specs[i].kind == IndexSpec::Kind::Scalar) {
        s += ref(n.input(op++));
        continue;
      }
      if (specs[i].has_lo) s += ref(n.input(op++));
      s += ":";
      if (specs[i].has_hi) s += ref(n.input(op++));
    }
    return s + "]";
  }

  static std::string list(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  }

  std::ostringstream& os_;
  std::map<std::pair<const void*, int>, std::string> names_;
  std::map<std::string, int> used_names_;
  int next_id_ = 0;
  int indent_ = 2;
};

}  // namespace

std::string print_function(const Function& f) {
  std::ostringstream os;
  Printer p(os);
  p.name_params(f.graph);
  os << "fn " << f.name << "(" << p.param_list(f.graph) << ") -> ";
  if (f.tuple_result) os << "(";
  for (size_t i = 0; i < f.results.size(); ++i) {
    if (i) os << ", ";
    if (!f.results[i].name.empty()) os << f.results[i].name << ": ";
    os << f.results[i].type.str();
  }
  if (f.tuple_result) os << ")";
  os << " {\n";
  p.print_graph_body(f.graph, 2);
  os << "  return ";
  for (size_t i = 0; i < f.graph.results.size(); ++i) os << (i ? ", " : "") << p.ref(f.graph.results[i]);
  os << "\n}\n";
  return os.str();
}

std::string print_program(const Program& prog) {
  std::string s;
  for (size_t i = 0; i < prog.functions.size(); ++i) {
    if (i) s += "\n";
    s += print_function(prog.functions[i]);
  }
  return s;
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  Printer p(os);
  p.name_params(g);
  os << "graph(" << p.param_list(g) << ") {\n";
  p.print_graph_body(g, 2);
  os << "  return ";
  for (size_t i = 0; i < g.results.size(); ++i) os << (i ? ", " : "") << p.ref(g.results[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace scangen::ir
