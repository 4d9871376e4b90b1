// Associative scans (ScanInfo::assoc, made by the rewrite parallel-scan): instead of a time loop,
// one call of the backend's runtime helper `scan_<op>`, which runs the steps in order or, when the
// cost model allows (the loop-IR pass scan-strategy), as chunk-local scans, a scan of the chunks'
// carries and a fix-up.
#include "codegen/lowering/assoc_scans.h"

#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/assoc.h"
#include "ir/builder.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

bool is_assoc_scan_call(const Stmt& s) {
  if (s.kind != StmtKind::Call) return false;
  const std::string& c = s.callee;
  return c.rfind("scan_", 0) == 0 || c.rfind("parallel_scan_", 0) == 0;
}

namespace {

// An operand as the helper reads it: element (t, l) at data[t * step + l * lane].
struct Strided {
  ExprRef data, step, lane;
};

class AssocCall {
 public:
  AssocCall(FunctionLowering& f, GraphLowering& outer, const AssocScanPlace& place)
      : F(f), outer_(outer), p_(place), info_(place.scan.info()) {}

  void emit() {
    std::string why;
    const ir::Graph& body = p_.scan.body();
    const ir::AssocStep step = *ir::match_assoc_step(info_, body, 0, &why);
    const DType d = body.results[0].type().dtype;
    // Slots 0-2 of the scratch hold scalar operands (the helpers take pointers); the chunks'
    // carries follow: 2 per lane and chunk.
    ExprRef chunks = F.let("chunks", lir::quotient(lir::add(p_.steps, lir::i64(kScanMinChunk - 1)), lir::i64(kScanMinChunk)));
    const std::vector<ExprRef> carry_dims{chunks, p_.lanes, lir::i64(2)};
    const Loc& loc = p_.scan.loc();
    const std::string what = "the chunk carries of '" + info_.states[0].name + "'";
    ExprRef carries = F.checked_count(carry_dims, d, loc, FunctionLowering::allocation_message(what, d, carry_dims, nullptr));
    ExprRef count = F.let("scratch_count", lir::add(carries, lir::i64(kScalarSlots)));
    scratch_ = F.allocate(info_.states[0].name + "_scratch", d, count, nullptr, loc,
                          FunctionLowering::allocation_message(what, d, carry_dims, F.bytes_of(count, d)));

    Strided init = operand_pointer(p_.init, 0, lir::i64(0));
    Strided a = step.a ? operand(step.a, 1) : Strided{};
    Strided b = operand(step.b, 2);
    if (!a.data) a = Strided{b.data, lir::i64(0), lir::i64(0)};  // unused by the other operators
    std::vector<ExprRef> args(kScanArgCount);
    args[kScanOut] = p_.out;
    args[kScanOutRows] = p_.last_only ? lir::i64(1) : p_.steps;
    args[kScanInit] = init.data;
    args[kScanA] = a.data;
    args[kScanAStep] = a.step;
    args[kScanALane] = a.lane;
    args[kScanB] = b.data;
    args[kScanBStep] = b.step;
    args[kScanBLane] = b.lane;
    args[kScanSteps] = p_.steps;
    args[kScanLanes] = p_.lanes;
    args[kScanChunkMinSteps] = lir::i64(0);  // serial until the cost model says otherwise
    args[kScanChunkMaxLanes] = lir::i64(0);
    args[kScanMinChunkArg] = lir::i64(kScanMinChunk);
    args[kScanScratch] = F.let_pointer("carries", scratch_, lir::i64(kScalarSlots), true);
    F.call(ir::assoc_op_helper(step.op), std::move(args));
  }

 private:
  static constexpr int64_t kScalarSlots = 3;  // init, a, b

  // A value known before the loop: its elements, or a scalar stored into scratch slot `slot`.
  Strided operand_pointer(const Tensor& t, int slot, ExprRef step) {
    if (t.data) return Strided{t.data, std::move(step), lir::i64(t.rank == 0 ? 0 : 1)};
    F.store(scratch_, lir::i64(slot), t.scalar);
    return Strided{F.let_pointer("scalar", scratch_, lir::i64(slot), false), lir::i64(0), lir::i64(0)};
  }

  Strided operand(const Value& v, int slot) {
    std::string why;
    const ir::AssocOperand o = *ir::assoc_operand(info_, v, p_.scan.body().results[0].type(), &why);
    switch (o.kind) {
      case ir::AssocOperandKind::Constant: {
        Tensor t;
        t.dtype = v.type().dtype;
        t.scalar = lir::imm(*ir::constant_value(v));
        return operand_pointer(t, slot, lir::i64(0));
      }
      case ir::AssocOperandKind::Param:
        return operand_pointer(outer_.value(p_.scan.input(info_.param_input(o.param))), slot, lir::i64(0));
      case ir::AssocOperandKind::SequenceTap:
        return sequence_rows(o);
    }
    SCANGEN_UNREACHABLE("an operand kind");
  }

  // The row a tap reads at step 0 and the distance to the next step's (backwards with `reverse`).
  Strided sequence_rows(const ir::AssocOperand& o) {
    const ir::ScanSequence& seq = info_.sequences[size_t(o.sequence)];
    const Tensor& u = p_.sequences[size_t(o.sequence)];
    const ExprRef& row_size = p_.sequence_row_sizes[size_t(o.sequence)];
    const int64_t offset = seq.row_offset(seq.taps[size_t(o.tap)], info_.reverse);
    ExprRef first = info_.reverse ? lir::sub(u.dims[0], lir::i64(offset + 1)) : lir::i64(offset);
    // With no step to take the row may not exist: the pointer stays inside the buffer.
    first = F.let("first_row", lir::max(first, lir::i64(0)));
    ExprRef data = F.let_pointer(seq.label + "_rows", u.data, lir::mul(first, row_size), false);
    ExprRef step = info_.reverse ? lir::sub(lir::i64(0), row_size) : row_size;
    return Strided{data, step, lir::i64(o.broadcast ? 0 : 1)};
  }

  FunctionLowering& F;
  GraphLowering& outer_;
  const AssocScanPlace& p_;
  const ir::ScanInfo& info_;
  ExprRef scratch_;
};

}  // namespace

void call_assoc_scan(FunctionLowering& f, GraphLowering& outer, const AssocScanPlace& place) {
  AssocCall(f, outer, place).emit();
}

}  // namespace scangen::codegen::lowering
