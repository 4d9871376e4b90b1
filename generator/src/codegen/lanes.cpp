#include "codegen/lanes.h"

#include <map>
#include <set>

#include "codegen/index_poly.h"

namespace scangen::codegen {
namespace {

using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

class Interchange {
 public:
  explicit Interchange(const lir::Function& f) : pointers_(lir::pointer_lets(*f.body)), polys_(*f.body) {}

  int run(std::vector<StmtRef>& body) {
    int n = 0;
    for (StmtRef& s : body) {
      if (s->kind == StmtKind::For && s->loop == lir::LoopKind::Vector) continue;  // already per element
      if (s->kind == StmtKind::For && s->loop == lir::LoopKind::Time) {
        if (StmtRef swapped = try_interchange(*s)) {
          s = swapped;
          ++n;
          continue;
        }
      }
      n += run(s->body);
      n += run(s->else_body);
    }
    return n;
  }

 private:
  std::string root_of(const std::string& p) const { return lir::pointer_root(pointers_, p); }
  // `p` points a whole number of lane rows into its buffer (a row of a state, or its start).
  bool rows_of_lanes(const std::string& p, const ExprRef& lanes) const {
    auto offset = polys_.address(p, lir::i64(0));
    auto row = polys_.of(lanes);
    return offset && row && poly_divisible(*offset, *row);
  }

 public:
  // The lanes of a time loop whose steps are element loops over them, each lane touching only its
  // own element of what the loop writes; null if it is not one.
  ExprRef lanes_of(const Stmt& time) const {
    ExprRef lanes;
    std::set<std::string> defined;  // names the step defines
    std::vector<const Stmt*> element_loops;
    for (const StmtRef& s : time.body) {
      switch (s->kind) {
        case StmtKind::Comment: continue;
        case StmtKind::Let:
          if (!s->vtype.is_pointer() && lir::has_load(s->value)) return nullptr;
          defined.insert(s->var);
          continue;
        case StmtKind::For:
          if (s->loop != lir::LoopKind::Vector) return nullptr;
          if (auto b = lir::const_int(s->begin); !b || *b != 0) return nullptr;
          if (!lanes) lanes = s->end;
          if (!lir::same_expr(lanes, s->end)) return nullptr;
          for (const StmtRef& e : s->body)
            if (e->kind != StmtKind::Let && e->kind != StmtKind::Store && e->kind != StmtKind::Comment) return nullptr;
          element_loops.push_back(s.get());
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
        case StmtKind::Barrier: return nullptr;
      }
    }
    if (!lanes) return nullptr;
    std::vector<std::string> lane_reads;
    lir::collect_reads(lanes, lane_reads);
    for (const std::string& r : lane_reads)
      if (defined.count(r)) return nullptr;
    // The buffers the loop writes, and every access to them: only at the lane's own element.
    std::set<std::string> written;
    for (const Stmt* loop : element_loops)
      for (const StmtRef& e : loop->body)
        if (e->kind == StmtKind::Store) written.insert(root_of(e->var));
    for (const Stmt* loop : element_loops) {
      ExprRef lane = lir::var(loop->var, DType::I64);
      auto own_element = [&](const std::string& p, const ExprRef& index) {
        if (!written.count(root_of(p))) return true;
        return lir::same_expr(index, lane) && rows_of_lanes(p, lanes);
      };
      for (const StmtRef& e : loop->body) {
        std::vector<std::pair<std::string, ExprRef>> loads;
        lir::collect_loads(e->value, loads);
        lir::collect_loads(e->index, loads);
        for (const auto& [p, index] : loads)
          if (!own_element(p, index)) return nullptr;
        if (e->kind == StmtKind::Store && !own_element(e->var, e->index)) return nullptr;
      }
    }
    return lanes;
  }

 private:
  StmtRef try_interchange(const Stmt& time) {
    ExprRef lanes = lanes_of(time);
    if (!lanes) return nullptr;
    // for (lane) { for (step) { lets; per loop: const i = lane; body } }
    // A support name: no .scan name becomes it.
    StmtRef lane_loop = lir::for_stmt("scangen_lane", lir::i64(0), lanes, lir::LoopKind::Vector);
    auto steps = std::make_shared<Stmt>(time);
    steps->body.clear();
    ExprRef lane = lir::var(lane_loop->var, DType::I64);
    for (const StmtRef& s : time.body) {
      if (s->kind != StmtKind::For) {
        steps->body.push_back(s);
        continue;
      }
      steps->body.push_back(lir::let_stmt(s->var, lane));
      steps->body.insert(steps->body.end(), s->body.begin(), s->body.end());
    }
    lane_loop->body.push_back(steps);
    return lane_loop;
  }

  std::map<std::string, const Stmt*> pointers_;
  IndexPolys polys_;
};

}  // namespace

lir::ExprRef independent_lanes(const lir::Function& f, const lir::Stmt& time) {
  if (time.kind != StmtKind::For || time.loop != lir::LoopKind::Time) return nullptr;
  return Interchange(f).lanes_of(time);
}

int interchange_lanes(lir::Function& f) {
  Interchange x(f);
  return x.run(f.body->body);
}

}  // namespace scangen::codegen
