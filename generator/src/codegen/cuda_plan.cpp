#include "codegen/cuda_plan.h"

#include <functional>
#include <map>

#include "codegen/lowering/assoc_scans.h"
#include "codegen/scan_strategy.h"

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;
using lir::WidthTerm;

// The storages worth the block's shared memory when a launch is one block: those written in a
// time loop (a state's rows, a step's temporaries), which the following steps read back, and that
// no result owns (results outlive the launch). Sequences computed before the loop (x @ W of all
// steps) are read once each and stay in the arena.
std::set<std::string> block_shared_storages(const lir::Function& f) {
  std::map<std::string, std::string> storage_of;  // allocated pointer -> its storage
  std::set<std::string> owned_by_results, written_in_steps;
  const std::map<std::string, const Stmt*> pointers = lir::pointer_lets(*f.body);
  std::function<void(const Stmt&, bool)> visit = [&](const Stmt& s, bool in_step) {
    if (s.kind == StmtKind::Alloc) storage_of[s.var] = s.storage;
    if (s.kind == StmtKind::Result && !s.storage.empty()) owned_by_results.insert(s.storage);
    if (in_step && s.kind == StmtKind::Store) written_in_steps.insert(lir::pointer_root(pointers, s.var));
    // The helpers' first argument is the buffer they write (copy, matmul).
    if (in_step && s.kind == StmtKind::Call && !s.args.empty() && s.args[0]->kind == ExprKind::Var)
      written_in_steps.insert(lir::pointer_root(pointers, s.args[0]->name));
    const bool step = in_step || (s.kind == StmtKind::For && s.loop == lir::LoopKind::Time);
    for (const auto& c : s.body) visit(*c, step);
    for (const auto& c : s.else_body) visit(*c, step);
  };
  visit(*f.body, false);
  std::set<std::string> out;
  for (const std::string& root : written_in_steps)
    if (auto it = storage_of.find(root); it != storage_of.end() && !owned_by_results.count(it->second))
      out.insert(it->second);
  return out;
}

// ---- the parallel width: how many threads a launch is worth, from the argument shapes

class WidthAnalysis {
 public:
  explicit WidthAnalysis(const lir::Function& f) {
    for (size_t i = 0; i < f.params.size(); ++i)
      for (size_t d = 0; d < f.params[i].dims.size(); ++d) dims_[f.params[i].dims[d]] = {int(i), int(d)};
    collect_lets(*f.body);
    visit(*f.body, false);
  }
  std::vector<WidthTerm> terms;

 private:
  void collect_lets(const Stmt& s) {
    if (s.kind == StmtKind::Let && !s.vtype.is_pointer()) lets_[s.var] = s.value;
    for (const auto& c : s.body) collect_lets(*c);
    for (const auto& c : s.else_body) collect_lets(*c);
  }
  bool term(const ExprRef& e, WidthTerm& t, int depth = 0) const {
    if (!e || depth > 64) return false;
    if (auto c = lir::const_int(e)) {
      t.factor *= *c;
      return *c >= 0 && *c < (int64_t(1) << 31);
    }
    if (e->kind == ExprKind::Var) {
      if (auto it = dims_.find(e->name); it != dims_.end()) {
        t.dims.push_back(it->second);
        return true;
      }
      if (auto it = lets_.find(e->name); it != lets_.end()) return term(it->second, t, depth + 1);
      return false;
    }
    if (e->kind == ExprKind::Binary && e->bop == ir::BinaryOp::Mul)
      return term(e->a, t, depth + 1) && term(e->b, t, depth + 1);
    return false;
  }
  void add(const ExprRef& e) {
    WidthTerm t;
    if (!term(e, t)) return;
    for (const WidthTerm& u : terms)
      if (u.factor == t.factor && u.dims == t.dims) return;
    terms.push_back(t);
  }
  void visit(const Stmt& s, bool in_element_loop) {
    if (in_element_loop) return;
    if (s.kind == StmtKind::For && s.loop == lir::LoopKind::Vector) {
      add(s.end);
      return;
    }
    if (s.kind == StmtKind::Call && s.callee == "matmul") add(lir::mul(s.args[3], s.args[5]));
    if (s.kind == StmtKind::Call && s.callee == "copy") add(s.args[2]);
    // An associative scan: a thread per lane, or per chunk of a lane when the cost model lets it
    // chunk (the helper keeps at most kCudaScanChunksPerLane of a lane's chunks in flight).
    if (lowering::is_assoc_scan_call(s)) {
      const bool chunks = lir::const_int(s.args[lowering::kScanChunkMinSteps]).value_or(0) > 0;
      add(lir::mul(s.args[lowering::kScanLanes], lir::i64(chunks ? kCudaScanChunksPerLane : 1)));
    }
    for (const auto& c : s.body) visit(*c, false);
    for (const auto& c : s.else_body) visit(*c, false);
  }
  std::map<std::string, std::pair<int, int>> dims_;
  std::map<std::string, ExprRef> lets_;
};

// Kernels whose time loops are all independent lanes (and that multiply no matrices) stream
// memory, one lane per thread: as many threads as an SM holds should be resident, so the kernel
// asks for all of them (__launch_bounds__, which caps registers at 32 on architectures of 2048
// threads). With the 40 registers ptxas picks unasked, an H100 holds 6 blocks of 256 threads per
// SM: 202,752 threads for 2^18 channels, so a third of the threads ran two channels in turn.
// Other kernels keep their registers: matmul's tiles need them, and time loops with a barrier per
// step are bound by the barrier, not by resident threads.
bool full_occupancy(const lir::Function& f) {
  if (f.kernel.lanes == 0) return false;
  // A matrix product anywhere, or a time loop outside element loops (one not made lanes).
  std::function<bool(const Stmt&, bool)> excluded = [&](const Stmt& st, bool in_element_loop) {
    if (st.kind == StmtKind::Call && st.callee == "matmul") return true;
    if (st.kind == StmtKind::For && st.loop == lir::LoopKind::Time && !in_element_loop) return true;
    const bool inside = in_element_loop || (st.kind == StmtKind::For && st.loop == lir::LoopKind::Vector);
    for (const auto* list : {&st.body, &st.else_body})
      for (const auto& c : *list)
        if (excluded(*c, inside)) return true;
    return false;
  };
  return !excluded(*f.body, false);
}

}  // namespace

int place_block_shared(lir::Function& f) {
  f.kernel.block_shared = block_shared_storages(f);
  return int(f.kernel.block_shared.size());
}

int choose_launch_bounds(lir::Function& f) {
  f.kernel.full_occupancy = full_occupancy(f);
  return f.kernel.full_occupancy ? 1 : 0;
}

int measure_parallel_width(lir::Function& f) {
  f.kernel.width = WidthAnalysis(f).terms;
  return int(f.kernel.width.size());
}

}  // namespace scangen::codegen
