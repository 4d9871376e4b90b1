// The barriers of a CUDA kernel, decided on its loop IR (the CUDA backend's last rewrite; the CPU
// backend never sees a Barrier).
//
// Every thread of a launch runs the whole function (docs/cuda.md). Uniform code (everything
// outside element loops) runs in every thread alike, so all threads store the same value at the
// same address; element loops give each thread elements of its own. Threads drift apart between
// barriers (warps and blocks run at their own pace), so a barrier goes where one thread's access
// could meet another thread's access from a different point of the program:
//  - a uniform load of a buffer that uniform code stored to more than once since the last
//    barrier: a slower thread may still be storing an older value (a fold stores `acc[0] = v` in
//    every step, then loads `acc[index]` after the loop). A single store is harmless: every thread
//    stores the same value at the same address and loads after its own store.
//  - a uniform store to a buffer that uniform code loaded since the last barrier: a slower thread
//    would load the new value. When the store's own index or value loads written memory, they are
//    computed into lets first, then the barrier, then the store.
//  - an element loop, Grow or Call after any uniform load or store since the last barrier: their
//    threads write and read elements that slower threads' uniform code may still load or store.
//  - after every element loop, whose elements every thread may read next; with the check whether
//    a thread failed when the loop holds checks. The helpers of Call (copy, matmul) end with a
//    barrier of their own, Grow's when it grows (templates/cuda/scangen_cuda_device.h).
// Buffers are the roots of pointers (lir::pointer_root). Arguments are never written during a
// launch, so loads of them never need a barrier. Loops: what an iteration leaves pending, the next
// one starts with (a fixed point over the body), so a buffer filled before a loop and only read in
// it costs no barrier per step (`s[t] = s[t-1] + sum(x[t])` with the sums pushed out of the loop),
// while one stored in every step and loaded after the loop gets one barrier, after the loop.
//
// Matches: the uniform statements of a function body, in loops and branches too.
// Produces: Barrier statements; lets `scangen_stored_at*` / `scangen_stored_value*` for a store
// split around its barrier.
// Must not touch: the inside of element loops. Each thread runs its own elements there, and not
// the same number of them, so a barrier inside would wait for ever; their elements own their
// addresses (element_nests.h, lanes.h) and the barrier after the loop orders them.
#include "codegen/cuda_barriers.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "support/check.h"

namespace scangen::codegen {
namespace {

using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

using Roots = std::set<std::string>;

// How often uniform code stored to a buffer since the last barrier.
enum class Stores : uint8_t { Once, Several };

// What uniform code did since the last barrier, by buffer.
struct Pending {
  std::map<std::string, Stores> stored;
  Roots loaded;  // written memory only: never arguments

  bool empty() const { return stored.empty() && loaded.empty(); }
  bool operator==(const Pending& o) const { return stored == o.stored && loaded == o.loaded; }
  void store(const std::string& root) {
    auto [it, added] = stored.emplace(root, Stores::Once);
    if (!added) it->second = Stores::Several;
  }
  void load(const Roots& roots) { loaded.insert(roots.begin(), roots.end()); }
  // Whether a load of `roots` could meet a slower thread's older store.
  bool stale(const Roots& roots) const {
    for (const std::string& r : roots)
      if (auto it = stored.find(r); it != stored.end() && it->second == Stores::Several)
        return true;
    return false;
  }
  void join(const Pending& o) {
    for (const auto& [root, n] : o.stored) {
      auto [it, added] = stored.emplace(root, n);
      if (!added && n == Stores::Several) it->second = Stores::Several;
    }
    load(o.loaded);
  }
};

// The state of the paths that reach a point; none after a break.
using Path = std::optional<Pending>;

void join(Path& into, const Path& other) {
  if (!other) return;
  if (!into)
    into = other;
  else
    into->join(*other);
}

int count_barriers(const std::vector<StmtRef>& stmts) {
  int n = 0;
  for (const StmtRef& s : stmts)
    n += (s->kind == StmtKind::Barrier) + count_barriers(s->body) + count_barriers(s->else_body);
  return n;
}

bool contains_check(const Stmt& s) {
  if (s.kind == StmtKind::Check) return true;
  for (const auto* list : {&s.body, &s.else_body})
    for (const StmtRef& c : *list)
      if (contains_check(*c)) return true;
  return false;
}

// Walks statement lists with the state of the paths through them. With an output list, it
// writes the statements there with their barriers; without one it only computes the state, as
// loops do until their fixed point.
class Placer {
 public:
  explicit Placer(const lir::Function& f) : pointers_(lir::pointer_lets(*f.body)) {
    for (const lir::Param& p : f.params)
      if (p.rank > 0) arguments_.insert(p.name);
  }

  Path list(const std::vector<StmtRef>& body, Path in, std::vector<StmtRef>* out) {
    for (const StmtRef& s : body) in = statement(s, std::move(in), out);
    return in;
  }

 private:
  Path statement(const StmtRef& s, Path in, std::vector<StmtRef>* out) {
    // Code after a break runs on no path; it is placed as if entered after a barrier.
    if (!in) {
      statement(s, Pending{}, out);
      return std::nullopt;
    }
    switch (s->kind) {
      case StmtKind::Block:
        return block(*s, *in, out);
      case StmtKind::Let:
      case StmtKind::Decl:
      case StmtKind::Assign:
      case StmtKind::Check:
      case StmtKind::Alloc:
      case StmtKind::Result:
        return uniform(s, *in, out);
      case StmtKind::Store:
        return store(s, *in, out);
      case StmtKind::For:
        return s->loop == lir::LoopKind::Vector ? element_loop(s, *in, out)
                                                : serial_loop(*s, *in, out);
      case StmtKind::If:
        return branch(*s, *in, out);
      case StmtKind::Break:
        SCANGEN_CHECK(breaks_, "a break outside a loop");
        join(*breaks_, in);
        emit(out, s);
        return std::nullopt;
      case StmtKind::Grow:
      case StmtKind::Call:
        return helper(s, *in, out);
      case StmtKind::Comment:
        emit(out, s);
        return in;
      case StmtKind::Barrier:
        emit(out, s);
        return Pending{};
    }
    SCANGEN_UNREACHABLE("a statement kind without barrier rules");
  }

  Path block(const Stmt& s, const Pending& in, std::vector<StmtRef>* out) {
    auto copy = std::make_shared<Stmt>(s);
    copy->body.clear();
    Path after = list(s.body, in, out ? &copy->body : nullptr);
    emit(out, copy);
    return after;
  }

  // Lets, declarations, assignments, checks, allocations and results: loads only.
  Path uniform(const StmtRef& s, Pending in, std::vector<StmtRef>* out) {
    const Roots loads = loaded_roots(*s);
    if (in.stale(loads)) in = barrier(out);
    in.load(loads);
    emit(out, s);
    return in;
  }

  Path store(const StmtRef& s, Pending in, std::vector<StmtRef>* out) {
    const Roots loads = loaded_roots(*s);
    const std::string root = lir::pointer_root(pointers_, s->var);
    SCANGEN_CHECK(!arguments_.count(root), "a store to an argument");
    if (in.stale(loads) || (in.loaded.count(root) && !loads.count(root))) in = barrier(out);
    in.load(loads);
    StmtRef store = s;
    if (in.loaded.count(root)) {
      // Its own index or value loads the buffer: every thread loads before any thread stores.
      store = computed_first(*s, out);
      in = barrier(out);
    }
    emit(out, store);
    in.store(root);
    return in;
  }

  Path element_loop(const StmtRef& s, const Pending& in, std::vector<StmtRef>* out) {
    if (!in.empty()) barrier(out);
    emit(out, s);
    return barrier(out, contains_check(*s));
  }

  Path serial_loop(const Stmt& s, Pending in, std::vector<StmtRef>* out) {
    const Roots bounds = loaded_roots(s);
    if (in.stale(bounds)) in = barrier(out);
    Pending after_barrier;
    after_barrier.load(bounds);
    in.load(bounds);
    // One barrier before the loop instead of one in every iteration, where what the loop enters
    // with is what needs it (a sum over what an earlier loop stored).
    if (!(in == after_barrier) && body_barriers(s, after_barrier) < body_barriers(s, in)) {
      barrier(out);
      in = after_barrier;
    }
    const Pending head = fixed_point(s, in);
    auto loop = std::make_shared<Stmt>(s);
    loop->body.clear();
    Path after = head;  // the loop ends at its head, or at a break
    join(after, iteration(s, head, out ? &loop->body : nullptr).second);
    emit(out, loop);
    return after;
  }

  // The state at the head of loop `s`: what it enters with, joined with what each iteration leaves.
  Pending fixed_point(const Stmt& s, const Pending& entry) {
    Pending head = entry;
    for (;;) {
      Path next = head;
      join(next, iteration(s, head, nullptr).first);
      if (*next == head) return head;
      head = std::move(*next);
    }
  }

  // How many barriers the body of loop `s` gets when the loop is entered with `entry`.
  int body_barriers(const Stmt& s, const Pending& entry) {
    const int splits = splits_;
    std::vector<StmtRef> scratch;
    iteration(s, fixed_point(s, entry), &scratch);
    splits_ = splits;
    return count_barriers(scratch);
  }

  // One iteration of loop `s` from the state at its head: the state it leaves to the next
  // iteration, and the state of its breaks.
  std::pair<Path, Path> iteration(const Stmt& s, const Pending& head, std::vector<StmtRef>* out) {
    Path breaks;
    Path* enclosing = breaks_;
    breaks_ = &breaks;
    Path next = list(s.body, head, out);
    breaks_ = enclosing;
    // The end is evaluated again before every iteration. Where it loads written memory (the
    // lowering computes bounds into lets, so it does not today), a barrier ends every iteration.
    const Roots end_loads = roots_of(s.end);
    if (next && !end_loads.empty()) {
      next = barrier(out);
      next->load(end_loads);
    }
    return {next, breaks};
  }

  Path branch(const Stmt& s, Pending in, std::vector<StmtRef>* out) {
    const Roots loads = loaded_roots(s);
    if (in.stale(loads)) in = barrier(out);
    in.load(loads);
    auto copy = std::make_shared<Stmt>(s);
    copy->body.clear();
    copy->else_body.clear();
    Path after = list(s.body, in, out ? &copy->body : nullptr);
    join(after, list(s.else_body, in, out ? &copy->else_body : nullptr));
    emit(out, copy);
    return after;
  }

  // Grow and Call: their threads copy or compute elements of buffers.
  Path helper(const StmtRef& s, Pending in, std::vector<StmtRef>* out) {
    if (!in.empty()) in = barrier(out);
    emit(out, s);
    if (s->kind == StmtKind::Call) return Pending{};  // copy and matmul end with a barrier
    in.load(loaded_roots(*s));
    return in;
  }

  // The store with its index and value computed into lets first, where they load written memory.
  StmtRef computed_first(const Stmt& s, std::vector<StmtRef>* out) {
    if (!out) return nullptr;  // only the state is computed
    const std::string suffix = ++splits_ > 1 ? "_" + std::to_string(splits_) : "";
    auto store = std::make_shared<Stmt>(s);
    store->index = computed(s.index, "scangen_stored_at" + suffix, *out);
    store->value = computed(s.value, "scangen_stored_value" + suffix, *out);
    return store;
  }
  ExprRef computed(const ExprRef& e, const std::string& name, std::vector<StmtRef>& out) const {
    if (roots_of(e).empty()) return e;
    out.push_back(lir::let_stmt(name, e));
    return lir::var(name, e->type);
  }

  static Pending barrier(std::vector<StmtRef>* out, bool failure_check = false) {
    if (out) out->push_back(lir::barrier(failure_check));
    return Pending{};
  }
  static void emit(std::vector<StmtRef>* out, const StmtRef& s) {
    if (out) out->push_back(s);
  }

  // The buffers an expression loads, arguments aside.
  Roots roots_of(const ExprRef& e) const {
    std::vector<std::pair<std::string, ExprRef>> loads;
    lir::collect_loads(e, loads);
    Roots roots;
    for (const auto& load : loads) {
      std::string root = lir::pointer_root(pointers_, load.first);
      if (!arguments_.count(root)) roots.insert(std::move(root));
    }
    return roots;
  }
  // The buffers a statement's own expressions load (not its sub-statements'), arguments aside.
  Roots loaded_roots(const Stmt& s) const {
    Roots roots;
    auto add = [&](const ExprRef& e) {
      Roots r = roots_of(e);
      roots.insert(r.begin(), r.end());
    };
    for (const ExprRef* e : {&s.value, &s.index, &s.begin, &s.end, &s.cond}) add(*e);
    for (const ExprRef& a : s.args) add(a);
    for (const lir::MessagePart& m : s.message) add(m.value);
    return roots;
  }

  std::map<std::string, const Stmt*> pointers_;
  Roots arguments_;
  Path* breaks_ = nullptr;  // the states at breaks of the innermost loop
  int splits_ = 0;
};

}  // namespace

int place_barriers(lir::Function& f) {
  Placer placer(f);
  std::vector<StmtRef> body;
  placer.list(f.body->body, Pending{}, &body);
  f.body->body = std::move(body);
  return count_barriers(f.body->body);
}

}  // namespace scangen::codegen
