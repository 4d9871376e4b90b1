#include "codegen/element_nests.h"

#include <set>

#include "codegen/index_poly.h"

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

// A serial loop `for (o < rows)` being flattened: what it holds.
struct Nest {
  ExprRef extent;                      // n: the extent of every element loop inside
  std::set<std::string> defined;       // o and every variable defined inside
  std::vector<const Stmt*> elements;   // the element loops, at any depth
  std::set<std::string> written;       // buffers stored to
};

class Flattener {
 public:
  explicit Flattener(const lir::Function& f) : pointers_(lir::pointer_lets(*f.body)), polys_(*f.body) {}

  // Whether `rows` is a nest whose elements touch only their own addresses (into `nest`).
  bool independent(const Stmt& rows, Nest& nest) const {
    if (auto b = lir::const_int(rows.begin); !b || *b != 0) return false;
    nest.defined.insert(rows.var);
    if (!collect(rows.body, nest) || nest.elements.empty()) return false;
    std::vector<std::string> extent_reads;
    lir::collect_reads(nest.extent, extent_reads);
    for (const std::string& r : extent_reads)
      if (nest.defined.count(r)) return false;
    return owned(rows, nest);
  }

  int run(std::vector<StmtRef>& body) {
    int n = 0;
    for (StmtRef& s : body) {
      if (s->kind == StmtKind::For && s->loop == lir::LoopKind::Vector) continue;  // already per element
      n += run(s->body);
      n += run(s->else_body);
      if (s->kind == StmtKind::For && s->loop == lir::LoopKind::Serial)
        if (StmtRef flat = try_flatten(*s)) {
          retired_.push_back(s);
          s = flat;
          ++n;
        }
    }
    return n;
  }

 private:
  std::string root_of(const std::string& p) const { return lir::pointer_root(pointers_, p); }

  // Uniform statements are lets without loads (every element recomputes them), and serial loops
  // of the same; element loops start at 0 and hold lets and stores.
  bool collect(const std::vector<StmtRef>& body, Nest& nest) const {
    for (const StmtRef& s : body) {
      switch (s->kind) {
        case StmtKind::Comment: continue;
        case StmtKind::Let:
          if (lir::has_load(s->value) || lir::has_load(s->index)) return false;
          nest.defined.insert(s->var);
          continue;
        case StmtKind::For:
          nest.defined.insert(s->var);
          if (s->loop == lir::LoopKind::Serial) {
            if (lir::has_load(s->begin) || lir::has_load(s->end) || !collect(s->body, nest)) return false;
            continue;
          }
          if (s->loop != lir::LoopKind::Vector) return false;
          if (auto b = lir::const_int(s->begin); !b || *b != 0) return false;
          if (!nest.extent) nest.extent = s->end;
          if (!lir::same_expr(nest.extent, s->end)) return false;
          for (const StmtRef& e : s->body) {
            if (e->kind == StmtKind::Store) nest.written.insert(root_of(e->var));
            else if (e->kind == StmtKind::Let) nest.defined.insert(e->var);
            else if (e->kind != StmtKind::Comment) return false;
          }
          nest.elements.push_back(s.get());
          continue;
        case StmtKind::Block:
        case StmtKind::Decl:
        case StmtKind::Assign:
        case StmtKind::Store:
        case StmtKind::If:
        case StmtKind::Break:
        case StmtKind::Check:
        case StmtKind::Alloc:
        case StmtKind::Grow:
        case StmtKind::Call:
        case StmtKind::Result:
        case StmtKind::Barrier: return false;
      }
    }
    return true;
  }

  // Element e = o * n + j touches only addresses e + d of each buffer the nest writes, where the
  // offsets d of one buffer differ by whole multiples of rows * n (state rows): no element reads
  // or writes what another writes.
  bool owned(const Stmt& rows, const Nest& nest) const {
    ExprRef row = lir::var(rows.var, DType::I64);
    auto row_start = polys_.of(lir::mul(row, nest.extent));
    auto elements = polys_.of(lir::mul(rows.end, nest.extent));
    if (!row_start || !elements) return false;
    std::map<std::string, IndexPoly> offsets;
    for (const Stmt* loop : nest.elements) {
      auto element = poly_add(*row_start, poly_var(loop->var));
      if (!element) return false;
      for (const StmtRef& e : loop->body) {
        std::vector<std::pair<std::string, ExprRef>> accesses;
        lir::collect_loads(e->value, accesses);
        lir::collect_loads(e->index, accesses);
        if (e->kind == StmtKind::Store) accesses.push_back({e->var, e->index});
        for (const auto& [pointer, index] : accesses) {
          std::string root = root_of(pointer);
          if (!nest.written.count(root)) continue;
          auto address = polys_.address(pointer, index);
          if (!address) return false;
          auto offset = poly_add(*address, *element, -1);
          if (!offset || poly_mentions(*offset, nest.defined)) return false;
          auto [first, added] = offsets.emplace(root, *offset);
          if (added) continue;
          auto apart = poly_add(*offset, first->second, -1);
          if (!apart || !poly_divisible(*apart, *elements)) return false;
        }
      }
    }
    return true;
  }

  StmtRef try_flatten(const Stmt& rows) {
    Nest nest;
    if (!independent(rows, nest)) return nullptr;

    // for (e < rows * n) { o = e / n; ...; j = e - o * n; ... }
    const bool single = lir::const_int(nest.extent) == 1;
    // A support name (no .scan name becomes one), numbered: flattened nests may nest.
    StmtRef loop = lir::for_stmt("scangen_element" + (++flattened_ > 1 ? "_" + std::to_string(flattened_) : std::string()),
                                 lir::i64(0), single ? rows.end : lir::mul(rows.end, nest.extent), lir::LoopKind::Vector);
    ExprRef element = lir::var(loop->var, DType::I64);
    ExprRef row = single ? element : lir::quotient(element, nest.extent);
    define(loop->body, rows.var, row);
    ExprRef column = single ? lir::i64(0) : lir::sub(element, lir::mul(lir::var(rows.var, DType::I64), nest.extent));
    inline_elements(rows.body, loop->body, column);
    rewrite_indices(loop->body, loop->var);
    return loop;
  }

  void define(std::vector<StmtRef>& out, const std::string& name, const ExprRef& value) {
    out.push_back(lir::let_stmt(name, value));
    polys_.define(name, value);
  }

  // The statements of the nest for one element: each element loop's body, its variable `column`.
  void inline_elements(const std::vector<StmtRef>& body, std::vector<StmtRef>& out, const ExprRef& column) {
    for (const StmtRef& s : body) {
      if (s->kind == StmtKind::For && s->loop == lir::LoopKind::Vector) {
        define(out, s->var, column);
        out.insert(out.end(), s->body.begin(), s->body.end());
      } else if (s->kind == StmtKind::For) {
        auto serial = std::make_shared<Stmt>(*s);
        serial->body.clear();
        inline_elements(s->body, serial->body, column);
        out.push_back(serial);
      } else {
        out.push_back(s);
      }
    }
  }

  // Indices that work out to the element itself become it.
  ExprRef rewrite(const ExprRef& e, const ExprRef& element) const {
    if (!e || e->kind == ExprKind::Imm || e->kind == ExprKind::Var) return e;
    ExprRef a = rewrite(e->a, element), b = rewrite(e->b, element), c = rewrite(e->c, element);
    if (e->kind == ExprKind::Load && polys_.of(a) == poly_var(element->name)) a = element;
    std::vector<ExprRef> args;
    for (const ExprRef& arg : e->args) args.push_back(rewrite(arg, element));
    if (a == e->a && b == e->b && c == e->c && args == e->args) return e;
    auto copy = std::make_shared<lir::Expr>(*e);
    copy->a = a;
    copy->b = b;
    copy->c = c;
    copy->args = std::move(args);
    return copy;
  }

  void rewrite_indices(std::vector<StmtRef>& body, const std::string& element_name) {
    ExprRef element = lir::var(element_name, DType::I64);
    for (StmtRef& s : body) {
      auto copy = std::make_shared<Stmt>(*s);
      copy->value = rewrite(s->value, element);
      copy->index = rewrite(s->index, element);
      copy->begin = rewrite(s->begin, element);
      copy->end = rewrite(s->end, element);
      if (s->kind == StmtKind::Store && polys_.of(copy->index) == poly_var(element_name)) copy->index = element;
      rewrite_indices(copy->body, element_name);
      s = copy;
    }
  }

  std::map<std::string, const Stmt*> pointers_;
  IndexPolys polys_;
  int flattened_ = 0;
  // The loops replaced: pointers_ and polys_ still point at their pointer lets.
  std::vector<StmtRef> retired_;
};

}  // namespace

lir::ExprRef independent_element_nest(const lir::Function& f, const lir::Stmt& rows) {
  if (rows.kind != StmtKind::For || rows.loop != lir::LoopKind::Serial) return nullptr;
  Nest nest;
  return Flattener(f).independent(rows, nest) ? nest.extent : nullptr;
}

int flatten_element_nests(lir::Function& f) {
  Flattener x(f);
  return x.run(f.body->body);
}

}  // namespace scangen::codegen
