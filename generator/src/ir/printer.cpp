#include "ir/printer.h"

#include <sstream>

#include "ir/print_support.h"

namespace scangen::ir {
namespace {

class Printer {
 public:
  explicit Printer(std::ostringstream& os) : os_(os) {}

  void print_graph_body(const Graph& g, int indent) {
    for (const Node* n : topological_order(g)) {
      if (n->kind() == NodeKind::Param) continue;
      indent_ = indent;
      names_.name_outputs(*n, next_id_++);
      if (const auto* scan = n->as<ScanNode>())
        print_scan(*scan);
      else
        line(*n, operation_text(*n, names_));
    }
  }

  ValueNames& names() { return names_; }
  std::string ref(const Value& v) const { return names_.ref(v); }

  void print_scan(const ScanNode& n) {
    const ScanInfo& info = n.info();
    std::string s = "scan";
    if (info.has_steps) s += " steps=" + ref(n.input(info.steps_input()));
    s += info.flags_text();
    if (!info.sequences.empty()) {
      s += " sequences(";
      for (size_t i = 0; i < info.sequences.size(); ++i) {
        if (i) s += ", ";
        s += ref(n.input(info.sequence_input(int(i)))) + " taps " + int_list(info.sequences[i].taps);
      }
      s += ")";
    }
    if (!info.states.empty()) {
      s += " states(";
      for (size_t i = 0; i < info.states.size(); ++i) {
        if (i) s += ", ";
        s += info.states[i].name + ": init " + ref(n.input(info.init_input(int(i)))) + " lags " +
             int_list(info.states[i].lags) + (info.states[i].init_in_place ? " in-place" : "");
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
    names_.name_params(body);
    pad(saved);
    os_ << "^step(" << names_.param_list(body) << "):\n";
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

  std::ostringstream& os_;
  ValueNames names_;
  int next_id_ = 0;
  int indent_ = 2;
};

}  // namespace

std::string print_function(const Function& f) {
  std::ostringstream os;
  Printer p(os);
  p.names().name_params(f.graph);
  os << function_header(f, p.names());
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
  p.names().name_params(g);
  os << "graph(" << p.names().param_list(g) << ") {\n";
  p.print_graph_body(g, 2);
  os << "  return ";
  for (size_t i = 0; i < g.results.size(); ++i) os << (i ? ", " : "") << p.ref(g.results[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace scangen::ir
