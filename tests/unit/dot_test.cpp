// The Graphviz printer of the IR (ir/dot.h). Graphviz is not needed: the output is read back by a
// small parser of the DOT subset the printer writes, and checked structurally (braces balance,
// every node is declared once and before any edge uses it, clusters nest as the scans do), against
// the text printer (every value's box carries the printer's line for it), and for determinism and
// escaping.
#define BOOST_TEST_MODULE dot
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generator_test_support.h"
#include "ir/builder.h"
#include "ir/dot.h"
#include "ir/printer.h"

using namespace scangen;
using scangen::testing::compile;

namespace {

// ---- a parser of the DOT the printer writes

struct Token {
  enum class Kind { Id, String, Html, Punct } kind;
  std::string text;  // Id: the name; String: the text between the quotes, undecoded; Html: between < >
};

// The text of a quoted label as Graphviz shows it: \" -> ", \\ -> \, \n and \l -> line breaks.
std::string decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    if (c == 'n' || c == 'l') out += '\n';
    else if (c == '"' || c == '\\') out += c;
    else out += std::string("\\") + c;
  }
  return out;
}

struct Attrs : std::map<std::string, Token> {
  std::string str(const std::string& name) const {
    auto it = find(name);
    if (it == end()) return "";
    return it->second.kind == Token::Kind::String ? decode(it->second.text) : it->second.text;
  }
  bool has(const std::string& name) const { return count(name) > 0; }
};

struct Cluster {
  std::string name, parent;  // parent: the enclosing cluster ("" at the top)
  Attrs attrs;
};

struct NodeDecl {
  std::string id, cluster;  // cluster: the innermost enclosing cluster
  Attrs attrs;
};

struct Edge {
  std::string from, to;          // node ids, without ports
  std::string from_port, to_port;  // "o0", "r1:n", ...
  Attrs attrs;
};

struct Dot {
  std::vector<std::string> errors;
  Attrs graph;  // graph [ ... ]
  std::vector<Cluster> clusters;
  std::vector<NodeDecl> nodes;
  std::vector<Edge> edges;

  const NodeDecl* node(const std::string& id) const {
    for (const NodeDecl& n : nodes)
      if (n.id == id) return &n;
    return nullptr;
  }
  const Cluster* cluster(const std::string& name) const {
    for (const Cluster& c : clusters)
      if (c.name == name) return &c;
    return nullptr;
  }
  // The nodes whose decoded label (or raw HTML label) is `label`.
  std::vector<const NodeDecl*> with_label(const std::string& label) const {
    std::vector<const NodeDecl*> out;
    for (const NodeDecl& n : nodes)
      if (n.attrs.str("label") == label) out.push_back(&n);
    return out;
  }
  std::vector<const NodeDecl*> label_containing(const std::string& part) const {
    std::vector<const NodeDecl*> out;
    for (const NodeDecl& n : nodes)
      if (n.attrs.str("label").find(part) != std::string::npos) out.push_back(&n);
    return out;
  }
  std::vector<const Edge*> edges_between(const std::string& from, const std::string& to) const {
    std::vector<const Edge*> out;
    for (const Edge& e : edges)
      if (e.from == from && e.to == to) out.push_back(&e);
    return out;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& text) { tokenize(text); }

  Dot parse() {
    if (!accept_id("digraph")) error("expected 'digraph'");
    if (peek_kind(Token::Kind::Id)) ++pos_;  // the graph's name
    expect("{");
    statements("");
    expect("}");
    if (pos_ < toks_.size()) error("text after the closing brace");
    return std::move(dot_);
  }

 private:
  void tokenize(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
      char c = s[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '"') {
        std::string t;
        ++i;
        while (i < s.size() && s[i] != '"') {
          if (s[i] == '\n') error("line break in a quoted string");
          if (s[i] == '\\' && i + 1 < s.size()) t += s[i++];
          t += s[i++];
        }
        if (i >= s.size()) return error("unterminated string");
        ++i;
        toks_.push_back({Token::Kind::String, t});
      } else if (c == '<') {
        int depth = 0;
        size_t start = i;
        do {
          if (s[i] == '<') ++depth;
          if (s[i] == '>') --depth;
          ++i;
        } while (i < s.size() && depth > 0);
        if (depth != 0) return error("unterminated HTML string");
        toks_.push_back({Token::Kind::Html, s.substr(start + 1, i - start - 2)});
      } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
        toks_.push_back({Token::Kind::Punct, "->"});
        i += 2;
      } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') {
        size_t start = i;
        while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.' ||
                                (s[i] == '-' && !(i + 1 < s.size() && s[i + 1] == '>'))))
          ++i;
        toks_.push_back({Token::Kind::Id, s.substr(start, i - start)});
      } else if (std::string("{}[];,=:").find(c) != std::string::npos) {
        toks_.push_back({Token::Kind::Punct, std::string(1, c)});
        ++i;
      } else {
        return error(std::string("unexpected character '") + c + "'");
      }
    }
  }

  void error(const std::string& e) {
    if (dot_.errors.size() < 20) dot_.errors.push_back(e + " (token " + std::to_string(pos_) + ")");
  }
  bool at_end() const { return pos_ >= toks_.size(); }
  bool peek(const std::string& punct) const {
    return !at_end() && toks_[pos_].kind == Token::Kind::Punct && toks_[pos_].text == punct;
  }
  bool peek_kind(Token::Kind k) const { return !at_end() && toks_[pos_].kind == k; }
  bool accept(const std::string& punct) {
    if (!peek(punct)) return false;
    ++pos_;
    return true;
  }
  bool accept_id(const std::string& id) {
    if (!peek_kind(Token::Kind::Id) || toks_[pos_].text != id) return false;
    ++pos_;
    return true;
  }
  void expect(const std::string& punct) {
    if (!accept(punct)) {
      error("expected '" + punct + "'" + (at_end() ? " at the end" : " before '" + toks_[pos_].text + "'"));
      if (!at_end()) ++pos_;
    }
  }
  std::string id() {
    if (!peek_kind(Token::Kind::Id)) {
      error("expected an identifier");
      if (!at_end()) ++pos_;
      return "?";
    }
    return toks_[pos_++].text;
  }
  Token value() {
    if (at_end()) {
      error("expected a value");
      return {Token::Kind::Id, "?"};
    }
    const Token& t = toks_[pos_++];
    if (t.kind == Token::Kind::Punct) error("expected a value, not '" + t.text + "'");
    return t;
  }

  Attrs attr_list() {
    Attrs a;
    expect("[");
    while (!at_end() && !peek("]")) {
      std::string name = id();
      expect("=");
      Token v = value();
      if (a.count(name)) error("attribute '" + name + "' given twice");
      a[name] = v;
      if (!accept(",")) accept(";");
    }
    expect("]");
    return a;
  }

  // A node id with an optional port (and compass point).
  std::pair<std::string, std::string> node_ref() {
    std::string n = id(), port;
    while (accept(":")) port += (port.empty() ? "" : ":") + id();
    return {n, port};
  }

  void statements(const std::string& cluster) {
    while (!at_end() && !peek("}")) {
      if (accept(";")) continue;
      if (accept_id("graph")) {
        Attrs a = attr_list();
        if (cluster.empty()) dot_.graph = a;
      } else if (accept_id("node") || accept_id("edge")) {
        attr_list();
      } else if (accept_id("subgraph")) {
        std::string name = id();
        if (dot_.cluster(name)) error("subgraph '" + name + "' declared twice");
        dot_.clusters.push_back({name, cluster, {}});
        expect("{");
        statements(name);
        expect("}");
      } else if (peek_kind(Token::Kind::Id) && pos_ + 1 < toks_.size() && toks_[pos_ + 1].text == "=" &&
                 toks_[pos_ + 1].kind == Token::Kind::Punct) {
        std::string name = id();
        expect("=");
        Token v = value();
        for (Cluster& c : dot_.clusters)
          if (c.name == cluster) c.attrs[name] = v;
        if (cluster.empty()) dot_.graph[name] = v;
      } else {
        auto [first, first_port] = node_ref();
        if (!peek("->")) {
          Attrs a = peek("[") ? attr_list() : Attrs();
          if (!first_port.empty()) error("a port in the declaration of '" + first + "'");
          if (dot_.node(first)) error("node '" + first + "' declared twice");
          dot_.nodes.push_back({first, cluster, a});
        } else {
          std::vector<std::pair<std::string, std::string>> chain{{first, first_port}};
          while (accept("->")) chain.push_back(node_ref());
          Attrs a = peek("[") ? attr_list() : Attrs();
          for (const auto& [n, port] : chain)
            if (!dot_.node(n)) error("node '" + n + "' used by an edge before it is declared");
          for (size_t i = 0; i + 1 < chain.size(); ++i)
            dot_.edges.push_back({chain[i].first, chain[i + 1].first, chain[i].second, chain[i + 1].second, a});
        }
      }
      accept(";");
    }
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  Dot dot_;
};

// Braces balance outside quoted and HTML strings (the tokenizer sets those apart).
bool braces_balance(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  int html = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (html > 0) {
      html += c == '<' ? 1 : c == '>' ? -1 : 0;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '<') html = 1;
    else if (c == '{') ++depth;
    else if (c == '}' && --depth < 0) return false;
  }
  return depth == 0 && !in_string && html == 0;
}

Dot parse_checked(const std::string& text) {
  BOOST_TEST(braces_balance(text));
  Dot d = Parser(text).parse();
  BOOST_TEST(d.errors.empty(), "DOT errors:\n" << [&] {
    std::string s;
    for (const std::string& e : d.errors) s += "  " + e + "\n";
    return s;
  }() << text);
  return d;
}

// Every value line of the text printer, "%5: f32[n] = mul %4, %A", has a box labelled
// "%5: f32[n]\nmul %4, %A" (scan lines excepted: a scan node is a table).
void check_mirrors_printer(const Dot& d, const ir::Program& p) {
  std::istringstream lines(ir::print_program(p));
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] != '%') continue;
    size_t colon = line.find(": ", start), eq = line.find(" = ", start);
    if (colon == std::string::npos || eq == std::string::npos || colon > eq) continue;
    std::string text = line.substr(eq + 3);
    if (text.rfind("scan", 0) == 0) continue;
    std::string label = line.substr(start, eq - start) + "\n" + text;
    BOOST_TEST(!d.with_label(label).empty(), "no box labelled '" << label << "'");
    ++checked;
  }
  BOOST_TEST(checked > 0);
}

// "LINE:COL" of the first `needle` in `text` (1-based).
std::string loc_of(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  BOOST_TEST_REQUIRE(at != std::string::npos);
  int line = 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
  size_t line_start = text.rfind('\n', at);
  size_t col = line_start == std::string::npos ? at + 1 : at - line_start;
  return std::to_string(line) + ":" + std::to_string(col);
}

// The ids of the nodes labelled exactly `label`; the test fails unless there is exactly one.
std::string the_node(const Dot& d, const std::string& label) {
  auto found = d.with_label(label);
  BOOST_TEST(found.size() == 1u, "nodes labelled '" << label << "': " << found.size());
  return found.empty() ? "" : found.front()->id;
}

const char* kWalk =
    "fn walk(u: f32[L], x0: f32[2], limit: f32) -> (x: f32[?], y: f32[?]) {\n"
    "    let (x, y) = scan(reverse) {\n"
    "        init x = x0\n"
    "        x[t] = x[t-1] * 0.5 + x[t-2] + u[t] - u[t-2]\n"
    "        y[t] = x[t] + u[t+1]\n"
    "        until y[t] > limit\n"
    "    }\n"
    "    return (x, y)\n"
    "}\n";

const char* kParagraph =
    "fn paragraph(words: f32[S, N, E], h0: f32[H], p0: f32[P],\n"
    "             W_w: f32[E, H], U_w: f32[H, H], W_s: f32[H, P], U_s: f32[P, P]) -> f32[S, P] {\n"
    "    let p = scan(index = s) {\n"
    "        init p = p0\n"
    "        let h = scan {\n"
    "            init h = h0\n"
    "            h[t] = tanh(words[s][t] @ W_w + h[t-1] @ U_w)\n"
    "        }\n"
    "        p[s] = tanh(h[-1] @ W_s + p[s-1] @ U_s)\n"
    "    }\n"
    "    return p\n"
    "}\n";

// An inlined call whose argument's length must be checked: a check_shape whose printed form holds
// double quotes.
const char* kCall =
    "fn g(a: f32[n], b: f32[n]) -> f32[n] {\n"
    "    return a + b\n"
    "}\n"
    "\n"
    "fn f(p: f32[m], q: f32[k]) -> f32[m] {\n"
    "    return g(p, q)\n"
    "}\n";

}  // namespace

BOOST_AUTO_TEST_CASE(plain_function) {
  ir::Program p = compile("fn f(a: f32[n], b: f32[n]) -> f32[n] {\n    return exp(a) * b + 1.5\n}\n");
  std::string text = ir::print_dot(p);
  Dot d = parse_checked(text);
  BOOST_TEST(text.rfind("digraph ", 0) == 0u);
  BOOST_TEST(d.graph.str("rankdir") == "TB");
  BOOST_TEST(d.graph.str("fontname") == "monospace");
  BOOST_TEST(d.graph.str("label") == "IR of test.scan");

  BOOST_TEST_REQUIRE(d.clusters.size() == 1u);
  BOOST_TEST(d.clusters[0].name == "cluster_f0");
  BOOST_TEST(d.clusters[0].attrs.str("label") == "fn f(%a: f32[n], %b: f32[n]) -> f32[n]");
  check_mirrors_printer(d, p);

  // Params are named ellipses, the result a double ellipse.
  std::string a = the_node(d, "%a: f32[n]"), b = the_node(d, "%b: f32[n]");
  BOOST_TEST(d.node(a)->attrs.str("shape") == "ellipse");
  std::string ret = the_node(d, "return out0: f32[n]");
  BOOST_TEST(d.node(ret)->attrs.str("peripheries") == "2");
  for (const NodeDecl& n : d.nodes) BOOST_TEST(n.cluster == "cluster_f0");

  // Edges from operands to users: labelled with the position when there are several.
  std::string e = the_node(d, "%0: f32[n]\nexp %a");
  std::string m = the_node(d, "%1: f32[n]\nmul %0, %b");
  BOOST_TEST_REQUIRE(d.edges_between(a, e).size() == 1u);
  BOOST_TEST(!d.edges_between(a, e)[0]->attrs.has("label"));
  BOOST_TEST_REQUIRE(d.edges_between(e, m).size() == 1u);
  BOOST_TEST(d.edges_between(e, m)[0]->attrs.str("label") == "0");
  BOOST_TEST_REQUIRE(d.edges_between(b, m).size() == 1u);
  BOOST_TEST(d.edges_between(b, m)[0]->attrs.str("label") == "1");
  BOOST_TEST(!d.label_containing("const 1.5").empty());
  std::string add = the_node(d, "%3: f32[n]\nadd %1, %2");
  BOOST_TEST(d.edges_between(add, ret).size() == 1u);

  // The function on its own.
  Dot one = parse_checked(ir::print_dot(p.functions[0]));
  BOOST_TEST(one.nodes.size() == d.nodes.size());
  BOOST_TEST(one.edges.size() == d.edges.size());
  BOOST_TEST(one.cluster("cluster_f0") != nullptr);
}

BOOST_AUTO_TEST_CASE(scan_with_sequences_states_outputs_and_until) {
  ir::Program p = compile(kWalk);
  std::string text = ir::print_dot(p);
  Dot d = parse_checked(text);
  check_mirrors_printer(d, p);

  const Cluster* body = d.cluster("cluster_scan_f0_0");
  BOOST_TEST_REQUIRE(body != nullptr);
  BOOST_TEST(body->parent == "cluster_f0");
  BOOST_TEST(body->attrs.str("label") == "scan at " + loc_of(kWalk, "scan(reverse)"));

  // The scan node: options, and one port per result, states and outputs told apart.
  auto scans = d.label_containing("sequence %u taps [-2, 0, 1]");
  BOOST_TEST_REQUIRE(scans.size() == 1u);
  const NodeDecl& scan = *scans[0];
  BOOST_TEST(scan.cluster == "cluster_f0");
  const std::string html = scan.attrs.str("label");
  for (const char* part : {"scan at 2:18", "reverse until", "state x: init %x0 lags [1, 2]", "outputs y",
                           "params %limit", "PORT=\"o0\"", "PORT=\"o1\"", "state x", "output y", "%0#x: f32[?]",
                           "%0#y: f32[?]"})
    BOOST_TEST(html.find(part) != std::string::npos, "scan label lacks '" << part << "'");

  // The body's params, in the scan's cluster.
  std::map<std::string, std::string> param;
  for (const char* label : {"%t: i64", "%u[t-2]: f32", "%u[t]: f32", "%u[t+1]: f32", "%x[t-1]: f32", "%x[t-2]: f32",
                            "%limit.2: f32"}) {
    param[label] = the_node(d, label);
    if (const NodeDecl* n = d.node(param[label])) {
      BOOST_TEST(n->cluster == body->name);
      BOOST_TEST(n->attrs.str("shape") == "ellipse");
    }
  }
  // State taps look like states.
  BOOST_TEST(d.node(param["%x[t-1]: f32"])->attrs.str("fillcolor") != d.node(param["%u[t]: f32"])->attrs.str("fillcolor"));
  // Body nodes are in the body's cluster, the rest outside.
  for (const char* label : {"%2: f32\nmul %x[t-1], %1", "%7: bool\ngt %6, %limit.2"})
    if (const NodeDecl* n = d.node(the_node(d, label))) BOOST_TEST(n->cluster == body->name);

  // Dashed edges from the outer inputs to the body params they feed.
  std::string u = the_node(d, "%u: f32[L]"), x0 = the_node(d, "%x0: f32[2]"), limit = the_node(d, "%limit: f32");
  for (const char* tap : {"%u[t-2]: f32", "%u[t]: f32", "%u[t+1]: f32"}) {
    auto es = d.edges_between(u, param[tap]);
    BOOST_TEST_REQUIRE(es.size() == 1u);
    BOOST_TEST(es[0]->attrs.str("style") == "dashed");
  }
  for (const char* lag : {"%x[t-1]: f32", "%x[t-2]: f32"}) {
    auto es = d.edges_between(x0, param[lag]);
    BOOST_TEST_REQUIRE(es.size() == 1u);
    BOOST_TEST(es[0]->attrs.str("style") == "dashed");
    BOOST_TEST(es[0]->attrs.str("label") == "init");
  }
  BOOST_TEST(d.edges_between(limit, param["%limit.2: f32"]).size() == 1u);
  // ... and the operand edges of the scan node, named by role.
  auto init = d.edges_between(x0, scan.id);
  BOOST_TEST_REQUIRE(init.size() == 1u);
  BOOST_TEST(init[0]->attrs.str("label") == "1: init x");

  // The yield, in the body, with the until flag; dashed edges back to the scan, coloured by kind.
  auto yields = d.label_containing("<B>yield</B>");
  BOOST_TEST_REQUIRE(yields.size() == 1u);
  const NodeDecl& yield = *yields[0];
  BOOST_TEST(yield.cluster == body->name);
  for (const char* part : {"x=%5", "y=%6", "until=%7"})
    BOOST_TEST(yield.attrs.str("label").find(part) != std::string::npos);
  // Body results flow into their yield ports.
  auto to_y = d.edges_between(the_node(d, "%6: f32\nadd %5, %u[t+1]"), yield.id);
  BOOST_TEST_REQUIRE(to_y.size() == 1u);
  BOOST_TEST(to_y[0]->to_port.rfind("r1", 0) == 0u);
  auto to_until = d.edges_between(the_node(d, "%7: bool\ngt %6, %limit.2"), yield.id);
  BOOST_TEST_REQUIRE(to_until.size() == 1u);
  BOOST_TEST(to_until[0]->to_port.rfind("r2", 0) == 0u);
  auto back = d.edges_between(yield.id, scan.id);
  std::map<std::string, const Edge*> by_label;
  for (const Edge* e : back) by_label[e->attrs.str("label")] = e;
  BOOST_TEST_REQUIRE(by_label.count("x") == 1u);
  BOOST_TEST_REQUIRE(by_label.count("y") == 1u);
  BOOST_TEST(by_label["x"]->attrs.str("style") == "dashed");
  BOOST_TEST(by_label["x"]->from_port.rfind("r0", 0) == 0u);
  BOOST_TEST(by_label["y"]->from_port.rfind("r1", 0) == 0u);
  BOOST_TEST(by_label["x"]->attrs.str("color") != by_label["y"]->attrs.str("color"));

  // The results read the scan's output ports.
  std::string rx = the_node(d, "return x: f32[?]"), ry = the_node(d, "return y: f32[?]");
  auto ex = d.edges_between(scan.id, rx), ey = d.edges_between(scan.id, ry);
  BOOST_TEST_REQUIRE(ex.size() == 1u);
  BOOST_TEST_REQUIRE(ey.size() == 1u);
  BOOST_TEST(ex[0]->from_port.rfind("o0", 0) == 0u);
  BOOST_TEST(ey[0]->from_port.rfind("o1", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(scan_windows_are_shown) {
  // An output of which only the last rows are kept (set by a rewrite): shown as the printer does.
  ir::Program p = compile(kWalk);
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  ir::Function& f = p.functions[0];
  const ir::ScanNode* scan = scangen::testing::first_scan(f.graph);
  BOOST_TEST_REQUIRE(scan != nullptr);
  ir::ScanInfo info = scan->info();
  info.windows["y"] = 3;
  ir::NodeRef windowed = ir::Builder().rebuild_scan(*scan, scan->inputs(), info, scan->body_ptr());
  f.graph.results = {ir::Value(windowed, 0), ir::Value(windowed, 1)};
  BOOST_TEST(ir::print_function(f).find("windows(y: 3)") != std::string::npos);
  Dot d = parse_checked(ir::print_dot(f));
  auto nodes = d.label_containing("windows y: 3");
  BOOST_TEST_REQUIRE(nodes.size() == 1u);
  BOOST_TEST(nodes[0]->attrs.str("label").find("last 3 rows") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(nested_scans_nest_their_clusters) {
  ir::Program p = compile(kParagraph);
  Dot d = parse_checked(ir::print_dot(p));
  check_mirrors_printer(d, p);

  std::vector<const Cluster*> scans;
  for (const Cluster& c : d.clusters)
    if (c.name.rfind("cluster_scan_", 0) == 0) scans.push_back(&c);
  BOOST_TEST_REQUIRE(scans.size() == 2u);
  const Cluster* outer = scans[0];
  const Cluster* inner = scans[1];
  BOOST_TEST(outer->parent == "cluster_f0");
  BOOST_TEST(inner->parent == outer->name);
  BOOST_TEST(outer->attrs.str("label") == "scan at " + loc_of(kParagraph, "scan(index"));
  BOOST_TEST(inner->attrs.str("label") == "scan at " + loc_of(kParagraph, "scan {"));

  // The inner scan node lives in the outer body; its body params and yield in its own cluster.
  auto inner_scan = d.label_containing("scan at " + loc_of(kParagraph, "scan {") + "</B>");
  BOOST_TEST_REQUIRE(inner_scan.size() == 1u);
  BOOST_TEST(inner_scan[0]->cluster == outer->name);
  for (const char* label : {"%t: i64", "%h[t-1]: f32[H]", "%words[s][t]: f32[E]"})
    if (const NodeDecl* n = d.node(the_node(d, label))) BOOST_TEST(n->cluster == inner->name);
  for (const char* label : {"%s: i64", "%p[s-1]: f32[P]", "%words[s]: f32[N, E]"})
    if (const NodeDecl* n = d.node(the_node(d, label))) BOOST_TEST(n->cluster == outer->name);
  int yields_inner = 0, yields_outer = 0;
  for (const NodeDecl* n : d.label_containing("<B>yield</B>")) {
    yields_inner += n->cluster == inner->name;
    yields_outer += n->cluster == outer->name;
  }
  BOOST_TEST(yields_inner == 1);
  BOOST_TEST(yields_outer == 1);
  // The outer body param %words[s] feeds the inner sequence tap.
  auto feeds = d.edges_between(the_node(d, "%words[s]: f32[N, E]"), the_node(d, "%words[s][t]: f32[E]"));
  BOOST_TEST_REQUIRE(feeds.size() == 1u);
  BOOST_TEST(feeds[0]->attrs.str("style") == "dashed");
}

BOOST_AUTO_TEST_CASE(deterministic) {
  // The same program, compiled twice (other addresses), prints the same text; twice too.
  for (const char* text : {kWalk, kParagraph, kCall}) {
    ir::Program a = compile(text), b = compile(text);
    std::string da = ir::print_dot(a);
    BOOST_TEST(da == ir::print_dot(a));
    BOOST_TEST(da == ir::print_dot(b));
    BOOST_TEST(da.find("0x") == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(functions_have_distinct_ids) {
  ir::Program p = compile(std::string(kWalk) + "\n" + kParagraph + "\n" + kCall);
  BOOST_TEST_REQUIRE(p.functions.size() == 4u);
  Dot d = parse_checked(ir::print_dot(p));  // a node declared twice would be an error
  for (const char* name : {"cluster_f0", "cluster_f1", "cluster_f2", "cluster_f3"})
    BOOST_TEST(d.cluster(name) != nullptr, name);
  BOOST_TEST(d.cluster("cluster_f3")->attrs.str("label") == "fn f(%p: f32[m], %q: f32[k]) -> f32[m]");
}

BOOST_AUTO_TEST_CASE(labels_are_escaped) {
  // The printed check_shape holds double quotes.
  ir::Program p = compile(kCall);
  std::string text = ir::print_dot(p);
  Dot d = parse_checked(text);
  check_mirrors_printer(d, p);
  BOOST_TEST(text.find("\\\"argument 'b' of 'g'\\\"") != std::string::npos);
  auto checks = d.label_containing("check_shape %q, [=%0] \"argument 'b' of 'g'\"");
  BOOST_TEST(checks.size() == 1u);

  // A file name with quotes and backslashes.
  driver::Compilation c = driver::Compilation::of_text("dir\\we\"ird\\\".scan", kCall, driver::Options());
  BOOST_TEST_REQUIRE(c.reach(driver::Stage::Rewritten));
  std::string qt = ir::print_dot(c.program());
  Dot qd = parse_checked(qt);
  BOOST_TEST(qd.graph.str("label") == "IR of dir\\we\"ird\\\".scan");
  BOOST_TEST(qt.find("label=\"IR of dir\\\\we\\\"ird\\\\\\\".scan\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_sample) {
  namespace fs = std::filesystem;
  int seen = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(SCANGEN_SOURCE_DIR) / "samples"))
    if (entry.path().extension() == ".scan") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    BOOST_TEST_CONTEXT(f.filename().string()) {
      std::ifstream in(f);
      std::stringstream ss;
      ss << in.rdbuf();
      ir::Program p = compile(ss.str());
      Dot d = parse_checked(ir::print_dot(p));
      check_mirrors_printer(d, p);
      ++seen;
    }
  }
  BOOST_TEST(seen > 0);
}

BOOST_AUTO_TEST_CASE(the_checker_rejects_bad_dot) {
  // The checks above are only as good as this parser: it must see the faults they look for.
  auto faults = [](const std::string& text) { return Parser(text).parse().errors.size(); };
  BOOST_TEST(faults("digraph g {\n  a [label=\"x\"];\n  b;\n  a -> b [label=\"0\"];\n}\n") == 0u);
  BOOST_TEST(faults("digraph g {\n  a;\n  a -> b;\n}\n") > 0u);                 // b never declared
  BOOST_TEST(faults("digraph g {\n  a -> b;\n  a;\n  b;\n}\n") > 0u);           // used before declared
  BOOST_TEST(faults("digraph g {\n  a;\n  a;\n}\n") > 0u);                      // declared twice
  BOOST_TEST(faults("digraph g {\n  a [label=\"say \"hi\"\"];\n}\n") > 0u);     // unescaped quotes
  BOOST_TEST(faults("digraph g {\n  subgraph c {\n  a;\n}\n") > 0u);            // unclosed subgraph
  BOOST_TEST(faults("digraph g {\n  a [label=<<B>x</B>];\n}\n") > 0u);          // unbalanced HTML
  BOOST_TEST(!braces_balance("digraph g { subgraph c { a; }"));
  BOOST_TEST(braces_balance("digraph g { a [label=\"{ \\\" }\"]; }"));
}
