// The loop-IR pass `threads` of the CPU backend (cpu_threads.h says what it decides and why).
#include "codegen/cpu_threads.h"

#include <algorithm>
#include <set>

#include "codegen/element_nests.h"
#include "codegen/lanes.h"
#include "codegen/lowering/assoc_scans.h"

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::LoopKind;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

// Element operations (cost units of work_of) worth handing to another thread: a fork-join costs
// about a microsecond when the workers are awake, this is some tens of microseconds of work.
constexpr int64_t kWorkPerThread = int64_t(1) << 15;
// Lanes per band at the least: a band runs every step, so even few lanes are worth a thread, but
// the stores of two bands should not share cache lines.
constexpr int64_t kLanesPerBand = 256;
// Chunks of element loops start a multiple of this many iterations apart (64 bytes of f32).
constexpr int64_t kElementAlignment = 16;

// The cost of evaluating an expression once: one unit per operation, more for the element
// functions (tanh, exp, ...) and the imported functions, which are calls.
int64_t work_of(const ExprRef& e) {
  if (!e) return 0;
  int64_t own = 1;
  switch (e->kind) {
    case ExprKind::Imm:
    case ExprKind::Var: own = 0; break;
    case ExprKind::Load:
    case ExprKind::Binary:
    case ExprKind::Select:
    case ExprKind::Cast: own = 1; break;
    case ExprKind::Unary: own = 4; break;
    case ExprKind::Call: own = 16; break;
  }
  int64_t total = own + work_of(e->a) + work_of(e->b) + work_of(e->c);
  for (const ExprRef& arg : e->args) total += work_of(arg);
  return total;
}

// The work of one run of a body (a nested loop counted once per iteration it does not know).
int64_t work_of(const std::vector<StmtRef>& body) {
  int64_t total = 0;
  for (const StmtRef& s : body)
    total += work_of(s->value) + work_of(s->index) + work_of(s->cond) + work_of(s->body) + work_of(s->else_body);
  return total;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether a chunk of an element loop may run on its own thread: its body only computes and
// stores (a failed check throws, which the pool hands back), and assigns only what it declares.
bool chunkable(const std::vector<StmtRef>& body, std::set<std::string>& declared) {
  for (const StmtRef& s : body) {
    switch (s->kind) {
      case StmtKind::Let:
      case StmtKind::Decl: declared.insert(s->var); continue;
      case StmtKind::Assign:
        if (!declared.count(s->var)) return false;
        continue;
      case StmtKind::Store:
      case StmtKind::Comment:
      case StmtKind::Check: continue;
      case StmtKind::For:
        if (s->loop != LoopKind::Serial && s->loop != LoopKind::Vector) return false;
        declared.insert(s->var);
        if (!chunkable(s->body, declared)) return false;
        continue;
      case StmtKind::Block:
      case StmtKind::If:
        if (!chunkable(s->body, declared) || !chunkable(s->else_body, declared)) return false;
        continue;
      case StmtKind::Break:
      case StmtKind::Alloc:
      case StmtKind::Grow:
      case StmtKind::Call:
      case StmtKind::Result:
      case StmtKind::Barrier: return false;
    }
  }
  return true;
}

// The pool's version of a helper (templates/cpu/scangen_cpu_threads.h): a product kernel, whose
// rows it splits, or an associative scan's (scan_affine ... -> parallel_scan_affine ...), which
// splits lanes or chunks of steps; empty for other calls.
std::string parallel_helper(const Stmt& call) {
  const bool product = call.callee == "matmul" || call.callee == "matmul_fast";
  const bool scan = lowering::is_assoc_scan_call(call) && call.callee.rfind("parallel_", 0) != 0;
  return product || scan ? "parallel_" + call.callee : "";
}

class ThreadPlanner {
 public:
  explicit ThreadPlanner(lir::Function& f) : f_(f) {}

  int run(std::vector<StmtRef>& body) {
    int n = 0;
    for (StmtRef& s : body) {
      switch (s->kind) {
        case StmtKind::For: n += plan_loop(s); continue;
        case StmtKind::Call:
          if (std::string parallel = parallel_helper(*s); !parallel.empty()) {
            s->callee = parallel;
            s->args.insert(s->args.begin(), lir::i64(f_.threads));
            ++n;
          }
          continue;
        case StmtKind::Block:
        case StmtKind::If:
          n += run(s->body);
          n += run(s->else_body);
          continue;
        case StmtKind::Let:
        case StmtKind::Decl:
        case StmtKind::Assign:
        case StmtKind::Store:
        case StmtKind::Break:
        case StmtKind::Check:
        case StmtKind::Alloc:
        case StmtKind::Grow:
        case StmtKind::Result:
        case StmtKind::Comment:
        case StmtKind::Barrier: continue;
      }
    }
    return n;
  }

 private:
  int plan_loop(StmtRef& s) {
    switch (s->loop) {
      case LoopKind::Time:
        if (ExprRef lanes = independent_lanes(f_, *s)) {
          s = bands(*s, lanes);
          return 1;
        }
        return run(s->body);
      case LoopKind::Vector: {
        std::set<std::string> declared;
        if (!chunkable(s->body, declared)) return 0;
        s = chunks(*s, lir::i64(std::max(kElementAlignment, ceil_div(kWorkPerThread, std::max<int64_t>(1, work_of(s->body))))),
                   kElementAlignment);
        return 1;
      }
      case LoopKind::Serial:
        if (ExprRef extent = independent_element_nest(f_, *s)) {
          // Rows of `extent` elements each: the grain in rows is the work per thread over a row's
          // (an empty row counts as one element: no division by zero).
          const int64_t per_element = std::max<int64_t>(1, work_of(s->body));
          s = chunks(*s, lir::quotient(lir::i64(ceil_div(kWorkPerThread, per_element)), lir::max(extent, lir::i64(1))), 1);
          return 1;
        }
        return run(s->body);
      case LoopKind::Parallel: return 0;
    }
    return 0;
  }

  // for (v in [b, e)) body  ->  parallel chunks [c, c_end) of [b, e) { for (v in [c, c_end)) body }
  StmtRef chunks(const Stmt& loop, ExprRef grain, int64_t alignment) {
    auto inner = std::make_shared<Stmt>(loop);
    inner->begin = lir::var(kChunk, DType::I64);
    inner->end = lir::var(kChunkEnd, DType::I64);
    return lir::parallel_stmt(kChunk, kChunkEnd, loop.begin, loop.end, std::move(grain), alignment, f_.threads,
                              {inner});
  }

  // A time loop of independent lanes: each band of lanes runs every step, its element loops
  // narrowed to the band.
  StmtRef bands(const Stmt& time, const ExprRef& lanes) {
    auto steps = std::make_shared<Stmt>(time);
    for (StmtRef& s : steps->body) {
      if (s->kind != StmtKind::For) continue;
      auto narrowed = std::make_shared<Stmt>(*s);
      narrowed->begin = lir::var(kBand, DType::I64);
      narrowed->end = lir::var(kBandEnd, DType::I64);
      s = narrowed;
    }
    return lir::parallel_stmt(kBand, kBandEnd, lir::i64(0), lanes, lir::i64(kLanesPerBand), kElementAlignment,
                              f_.threads, {steps});
  }

  // Support names (no .scan name becomes one); parallel loops never nest, so each is used once
  // in a scope.
  static constexpr const char* kChunk = "scangen_chunk";
  static constexpr const char* kChunkEnd = "scangen_chunk_end";
  static constexpr const char* kBand = "scangen_band";
  static constexpr const char* kBandEnd = "scangen_band_end";

  lir::Function& f_;
};

}  // namespace

int plan_threads(lir::Function& f) {
  if (f.threads == 1) return 0;
  ThreadPlanner planner(f);
  return planner.run(f.body->body);
}

}  // namespace scangen::codegen
