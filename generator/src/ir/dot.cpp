#include "ir/dot.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/print_support.h"

namespace scangen::ir {
namespace {

// Colours: states, per-step outputs and the until flag are told apart everywhere they appear
// (scan output ports, yield ports, body state taps, the dashed edges between them).
constexpr const char* kStateFill = "#d6e4ff";
constexpr const char* kStateLine = "#2457b3";
constexpr const char* kOutputFill = "#d5f2d5";
constexpr const char* kOutputLine = "#2e7d32";
constexpr const char* kUntilFill = "#fff1b8";
constexpr const char* kUntilLine = "#a06a00";
constexpr const char* kIndexFill = "#eeeeee";
constexpr const char* kConstFill = "#f4f4f4";
constexpr const char* kScanFill = "#f6f8ff";

// The text of a double-quoted DOT string (without the quotes): backslashes and quotes escaped,
// control characters turned into spaces (line breaks are added by the caller as "\n").
std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A quoted DOT string of one or more lines (centred, as Graphviz does with "\n").
std::string dot_string(const std::vector<std::string>& lines) {
  std::string s = "\"";
  for (size_t i = 0; i < lines.size(); ++i) s += (i ? "\\n" : "") + escape(lines[i]);
  return s + "\"";
}
std::string dot_string(const std::string& line) { return dot_string(std::vector<std::string>{line}); }

// Text inside an HTML-like label.
std::string html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    }
  }
  return out;
}

// Lines of an HTML-like cell, left-aligned.
std::string html_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += html(l) + "<BR ALIGN=\"LEFT\"/>";
  return s;
}

std::string loc_str(const Loc& loc) {
  return loc.line <= 0 ? "" : line_col(loc);
}

class DotPrinter {
 public:
  DotPrinter(std::ostringstream& os, std::string prefix, int depth)
      : os_(os), prefix_(std::move(prefix)), depth_(depth) {}

  void function(const Function& f) {
    // The header as the text printer writes it.
    names_.name_params(f.graph);
    std::string header = function_header(f, names_);

    open_cluster("cluster_" + prefix_, header, "rounded", "#888888", "");
    for (size_t i = 0; i < f.graph.params.size(); ++i)
      declare_param(f.graph.params[i], prefix_ + "_p" + std::to_string(i), "");
    graph_nodes(f.graph);
    for (size_t i = 0; i < f.graph.results.size(); ++i) {
      const Value& r = f.graph.results[i];
      std::string id = prefix_ + "_r" + std::to_string(i);
      std::string type = i < f.results.size() ? f.results[i].type.str() : r.type().str();
      line(id + " [shape=ellipse, peripheries=2, label=" + dot_string("return " + f.result_name(i) + ": " + type) +
           "];");
      edge(r, id, f.graph.results.size() > 1 ? std::to_string(i) : "");
    }
    close_cluster();
  }

 private:
  void stray_param(const ParamNode& n) {
    // Only a param that is not one of its graph's params gets here (the verifier rejects it):
    // draw it anyway, so that the picture of a broken graph shows where it is broken.
    std::string id = prefix_ + "_stray_" + std::to_string(stray_++);
    names_.name_param(n);
    ids_[&n] = id;
    line(id + " [shape=ellipse, style=dashed, label=" +
         dot_string({ref(n.output(0)) + ": " + n.output_types()[0].str(), "(not a param of this graph)"}) + "];");
  }
  // An operation other than a scan: a box with the text printer's line.
  void operation(const Node& n) {
    std::string extra;
    if (n.kind() == NodeKind::Constant) extra = "style=filled, fillcolor=\"" + std::string(kConstFill) + "\"";
    box(n, operation_text(n, names_), extra);
  }
  void scan(const ScanNode& n);

  std::string ref(const Value& v) const { return names_.ref(v); }

  // ---- DOT output

  void line(const std::string& text) { os_ << std::string(size_t(depth_) * 2, ' ') << text << "\n"; }

  void open_cluster(const std::string& name, const std::string& label, const std::string& style,
                    const std::string& color, const std::string& fill) {
    line("subgraph " + name + " {");
    ++depth_;
    std::string attrs = "label=" + dot_string(label) + "; labeljust=l; style=" + dot_string(fill.empty() ? style : style + ",filled") +
                        "; color=" + dot_string(color) + ";";
    if (!fill.empty()) attrs += " fillcolor=" + dot_string(fill) + ";";
    line(attrs);
  }

  void close_cluster() {
    --depth_;
    line("}");
  }

  // The DOT end point of a value: its node, or the port of a scan's output.
  std::string source(const Value& v) {
    auto it = v.node ? ids_.find(v.node.get()) : ids_.end();
    if (it == ids_.end()) {
      // Not drawn (a value of another graph): a visible placeholder, declared here.
      std::string id = prefix_ + "_undefined_" + std::to_string(undefined_++);
      line(id + " [shape=box, style=dashed, label=" + dot_string("%<undefined>") + "];");
      return id;
    }
    if (v.node->as<ScanNode>()) return it->second + ":o" + std::to_string(v.index) + ":s";
    return it->second;
  }

  // An edge from a value to a DOT node (or port).
  void edge(const Value& v, const std::string& to, std::string label, const std::string& extra = "") {
    if (v.node && v.node->num_outputs() > 1 && !v.node->as<ScanNode>())
      label = "#" + std::to_string(v.index) + (label.empty() ? "" : " " + label);
    std::string attrs;
    if (!label.empty()) attrs = "label=" + dot_string(label);
    if (!extra.empty()) attrs += (attrs.empty() ? "" : ", ") + extra;
    line(source(v) + " -> " + to + (attrs.empty() ? "" : " [" + attrs + "]") + ";");
  }

  // An operation: a box labelled "%5: f32[n]\nmul %4, %A", with its operand edges.
  void box(const Node& n, const std::string& text, const std::string& extra = "") {
    std::string id = ids_.at(&n);
    std::string head;
    if (n.num_outputs() == 1) {
      head = ref(n.output(0)) + ": " + n.output_types()[0].str();
    } else {
      head = "(";
      for (int i = 0; i < n.num_outputs(); ++i)
        head += (i ? ", " : "") + ref(n.output(i)) + ": " + n.output_types()[size_t(i)].str();
      head += ")";
    }
    line(id + " [label=" + dot_string({head, text}) + (extra.empty() ? "" : ", " + extra) + "];");
    operand_edges(n);
  }

  void operand_edges(const Node& n) {
    const std::string& id = ids_.at(&n);
    for (int i = 0; i < n.num_inputs(); ++i) edge(n.input(i), id, n.num_inputs() > 1 ? std::to_string(i) : "");
  }

  // A graph parameter: an ellipse "%A: f32[n]".
  void declare_param(const Value& p, const std::string& id, const std::string& extra) {
    ids_[p.node.get()] = id;
    line(id + " [shape=ellipse, label=" + dot_string(ref(p) + ": " + p.type().str()) +
         (extra.empty() ? "" : ", " + extra) + "];");
  }

  // The nodes of a graph whose params are declared, in the printer's order and numbering.
  void graph_nodes(const Graph& g) {
    for (const Node* n : topological_order(g)) {
      if (n->kind() == NodeKind::Param) {
        if (!ids_.count(n)) stray_param(*n->as<ParamNode>());
        continue;
      }
      int id = next_id_++;
      names_.name_outputs(*n, id);
      numbers_[n] = id;
      ids_[n] = prefix_ + "_n" + std::to_string(id);
      if (const auto* s = n->as<ScanNode>())
        scan(*s);
      else
        operation(*n);
    }
  }

  std::ostringstream& os_;
  std::string prefix_;  // "f0": makes ids unique across the functions of a program
  int depth_;
  ValueNames names_;
  std::unordered_map<const Node*, std::string> ids_;  // lookups only: never iterated
  std::unordered_map<const Node*, int> numbers_;
  int next_id_ = 0;
  int stray_ = 0;
  int undefined_ = 0;
};

void DotPrinter::scan(const ScanNode& n) {
  const ScanInfo& info = n.info();
  const std::string id = ids_.at(&n);
  const int number = numbers_.at(&n);
  const std::string where = loc_str(n.loc());
  const std::string title = where.empty() ? "scan" : "scan at " + where;

  // The node: its options, then one port per result.
  std::vector<std::string> opts;
  std::string flags;
  if (info.has_steps) flags += " steps=" + ref(n.input(info.steps_input()));
  flags += info.flags_text();
  if (!flags.empty()) opts.push_back(flags.substr(1));
  for (size_t i = 0; i < info.sequences.size(); ++i)
    opts.push_back("sequence " + ref(n.input(info.sequence_input(int(i)))) + " taps " + int_list(info.sequences[i].taps));
  for (size_t i = 0; i < info.states.size(); ++i)
    opts.push_back("state " + info.states[i].name + ": init " + ref(n.input(info.init_input(int(i)))) + " lags " +
                   int_list(info.states[i].lags) + (info.states[i].init_in_place ? " in-place" : ""));
  if (!info.outputs.empty()) {
    std::string s = "outputs ";
    for (size_t i = 0; i < info.outputs.size(); ++i) s += (i ? ", " : "") + info.outputs[i];
    opts.push_back(s);
  }
  if (!info.windows.empty()) {
    std::string s = "windows ";
    bool first = true;
    for (const auto& [name, rows] : info.windows) {
      s += (first ? "" : ", ") + name + ": " + std::to_string(rows);
      first = false;
    }
    opts.push_back(s);
  }
  if (info.num_params > 0) {
    std::string s = "params ";
    for (int i = 0; i < info.num_params; ++i) s += (i ? ", " : "") + ref(n.input(info.param_input(i)));
    opts.push_back(s);
  }
  const int cols = std::max(1, n.num_outputs());
  std::string label = "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\" BGCOLOR=\"white\">";
  label += "<TR><TD COLSPAN=\"" + std::to_string(cols) + "\" ALIGN=\"LEFT\"><B>" + html(title) +
           "</B><BR ALIGN=\"LEFT\"/>" + html_lines(opts) + "</TD></TR>";
  if (n.num_outputs() > 0) {
    label += "<TR>";
    for (int i = 0; i < n.num_outputs(); ++i) {
      bool state = i < int(info.states.size());
      std::string name = i < info.num_outputs() ? info.output_name(i) : std::to_string(i);
      std::vector<std::string> cell{(state ? "state " : "output ") + name,
                                    ref(n.output(i)) + ": " + n.output_types()[size_t(i)].str()};
      if (i < info.num_outputs() && info.window(i) > 0) cell.push_back("last " + std::to_string(info.window(i)) + " rows");
      label += "<TD PORT=\"o" + std::to_string(i) + "\" BGCOLOR=\"" + (state ? kStateFill : kOutputFill) + "\">" +
               html_lines(cell) + "</TD>";
    }
    label += "</TR>";
  }
  label += "</TABLE>";
  line(id + " [shape=none, margin=0, label=<" + label + ">];");

  // Operand edges, named by their role.
  for (int i = 0; i < n.num_inputs(); ++i) {
    std::string role;
    if (info.has_steps && i == info.steps_input()) {
      role = "steps";
    } else if (i < info.init_input(0)) {
      role = "sequence";
    } else if (i < info.param_input(0)) {
      int s = i - info.init_input(0);
      role = "init " + (s < int(info.states.size()) ? info.states[size_t(s)].name : std::string("?"));
    } else {
      role = "param";
    }
    edge(n.input(i), id, n.num_inputs() > 1 ? std::to_string(i) + ": " + role : role);
  }

  // The step graph: a nested cluster.
  const Graph& body = n.body();
  const std::string sid = prefix_ + "_s" + std::to_string(number);
  names_.name_params(body);
  open_cluster("cluster_scan_" + prefix_ + "_" + std::to_string(number), title, "rounded", "#5b6fa8", kScanFill);
  const int num_body_params = int(body.params.size());
  for (int i = 0; i < num_body_params; ++i) {
    std::string extra;
    bool sized = num_body_params == info.num_body_params();
    if (sized && i == info.body_index_param())
      extra = "style=filled, fillcolor=\"" + std::string(kIndexFill) + "\"";
    else if (sized && i >= info.body_state_param(0, 0) && i < info.body_param(0))
      extra = "style=filled, fillcolor=\"" + std::string(kStateFill) + "\", color=\"" + kStateLine + "\"";
    declare_param(body.params[size_t(i)], sid + "_p" + std::to_string(i), extra);
  }
  graph_nodes(body);

  // The yield: one row, "yield" then one port per body result (so that edges come in from above
  // and leave below without crossing a caption).
  const int num_results = int(body.results.size());
  const std::string yield = sid + "_yield";
  auto result_name = [&](int i) {
    if (i < info.num_outputs()) return info.output_name(i);
    if (info.has_until && i == num_results - 1) return std::string("until");
    return std::to_string(i);
  };
  auto result_kind = [&](int i) {
    if (i < int(info.states.size())) return 0;  // state
    if (i < info.num_outputs()) return 1;       // output
    return 2;                                   // until (or extra)
  };
  std::string ylabel = "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\" BGCOLOR=\"white\">";
  ylabel += "<TR><TD><B>yield</B></TD>";
  for (int i = 0; i < num_results; ++i) {
    const char* fill = result_kind(i) == 0 ? kStateFill : result_kind(i) == 1 ? kOutputFill : kUntilFill;
    ylabel += "<TD PORT=\"r" + std::to_string(i) + "\" BGCOLOR=\"" + fill + "\">" +
              html(result_name(i) + "=" + ref(body.results[size_t(i)])) + "</TD>";
  }
  ylabel += "</TR></TABLE>";
  line(yield + " [shape=none, margin=0, label=<" + ylabel + ">];");
  for (int i = 0; i < num_results; ++i) edge(body.results[size_t(i)], yield + ":r" + std::to_string(i) + ":n", "");
  close_cluster();

  // Dashed edges: outer inputs to the body params they feed, the yield to the scan's results.
  if (num_body_params == info.num_body_params()) {
    if (info.has_steps)
      edge(n.input(info.steps_input()), sid + "_p" + std::to_string(info.body_index_param()), "steps",
           "style=dashed, color=\"#777777\", fontcolor=\"#777777\"");
    for (size_t s = 0; s < info.sequences.size(); ++s)
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
        edge(n.input(info.sequence_input(int(s))), sid + "_p" + std::to_string(info.body_sequence_param(int(s), int(k))),
             "", "style=dashed, color=\"#777777\"");
    for (size_t s = 0; s < info.states.size(); ++s)
      for (size_t k = 0; k < info.states[s].lags.size(); ++k)
        edge(n.input(info.init_input(int(s))), sid + "_p" + std::to_string(info.body_state_param(int(s), int(k))),
             "init", "style=dashed, color=\"" + std::string(kStateLine) + "\", fontcolor=\"" + kStateLine + "\"");
    for (int i = 0; i < info.num_params; ++i)
      edge(n.input(info.param_input(i)), sid + "_p" + std::to_string(info.body_param(i)), "",
           "style=dashed, color=\"#777777\"");
  }
  // (To the node rather than to the port of the output, which a line would reach across the
  // options; the label names the output.)
  for (int i = 0; i < std::min(num_results, n.num_outputs()); ++i) {
    const std::string color = result_kind(i) == 0 ? kStateLine : kOutputLine;
    line(yield + ":r" + std::to_string(i) + ":s -> " + id + " [style=dashed, color=\"" + color + "\", fontcolor=\"" +
         color + "\", label=" + dot_string(result_name(i)) + "];");
  }
  if (info.has_until && num_results == n.num_outputs() + 1) {
    // The until flag feeds no value: a note of where it stops the loop.
    line(yield + ":r" + std::to_string(num_results - 1) + ":s -> " + id + " [style=dotted, color=\"" + kUntilLine +
         "\", fontcolor=\"" + kUntilLine + "\", label=\"until\"];");
  }
}

void open_digraph(std::ostringstream& os, const std::string& label) {
  os << "digraph scangen {\n";
  os << "  graph [rankdir=TB, fontname=\"monospace\", fontsize=12, labelloc=t, labeljust=l, label=" << dot_string(label)
     << "];\n";
  os << "  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  os << "  edge [fontname=\"monospace\", fontsize=9];\n";
}

}  // namespace

std::string print_dot(const Program& p) {
  std::ostringstream os;
  open_digraph(os, "IR of " + p.source_path);
  for (size_t i = 0; i < p.functions.size(); ++i) {
    DotPrinter printer(os, "f" + std::to_string(i), 1);
    printer.function(p.functions[i]);
  }
  os << "}\n";
  return os.str();
}

std::string print_dot(const Function& f) {
  std::ostringstream os;
  open_digraph(os, "fn " + f.name);
  DotPrinter printer(os, "f0", 1);
  printer.function(f);
  os << "}\n";
  return os.str();
}

}  // namespace scangen::ir
