// Semantic analysis of a scan, step 4 (sema_scan.cpp): the body, analyzed in a region of its own
// with definitions on demand (so that Y[t] may be read in any order, and cycles are found), once
// silently first when a state's literal init must learn its dtype from the step.
#include <climits>

#include "frontend/sema_internal.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Value;

// ---- reads of outputs and lets inside a body

void Analyzer::ensure_output(ScanFrame& f, int o) {
  ScanFrame::Output& out = f.outputs[size_t(o)];
  if (out.progress == Progress::Done) return;
  if (out.progress == Progress::InProgress) {
    out.step_value = SValue::invalid();
    return;  // the reader reports the cycle
  }
  out.progress = Progress::InProgress;
  RegionGuard region(*this, f.region);
  f.position_stack.push_back(out.stmt);
  SValue v = single(expr(*out.def->value, f.body_scope), out.def->value->loc);
  f.position_stack.pop_back();
  Loc loc = out.def->value->loc;
  if (v.ok()) {
    if (out.is_state()) {
      bool learning = f.dry_run && out.weak_init;
      DType state_dtype = out.step_type.dtype;
      if (v.weak && learning) {
        // Both literals: the silent pass learns the state's dtype from them (see scan()).
      } else if (v.weak &&
                 (state_dtype == DType::Bool || (is_float(v.dtype()) && is_int(state_dtype)))) {
        auto& d =
            diags_.report(DiagId::err_downcast, loc, "the step value of state '" + out.name + "'",
                          type_words(v), dtype_name(state_dtype));
        diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
        v = SValue::invalid();
      } else if (v.weak) {
        v = materialize(v, state_dtype, loc);
      } else if (learning) {
        // The silent pass learns the state's dtype from a strong step value.
      } else if (v.dtype() != out.step_type.dtype) {
        auto& d = diags_.report(DiagId::err_state_type_mismatch, loc, out.name, v.type().str(), out.step_type.str());
        diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
        v = SValue::invalid();
      }
      if (v.ok() && !learning) {
        const ir::Type& want = out.step_type;
        bool bad = v.type().rank() != want.rank();
        bool need_check = false;
        for (size_t i = 0; !bad && i < want.shape.size(); ++i) {
          if (v.type().shape[i].same_as(want.shape[i])) continue;
          if (v.type().shape[i].provably_different(want.shape[i])) bad = true;
          need_check = true;
        }
        if (bad) {
          auto& d = diags_.report(DiagId::err_state_type_mismatch, loc, out.name, v.type().str(), want.str());
          diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
          v = SValue::invalid();
        } else if (need_check) {
          // The step value must have the init's shape; checked at run time against the init.
          std::vector<ir::DimCheck> checks(want.shape.size());
          std::vector<Value> operands;
          int offset = out.init_value.type().rank() - want.rank();
          for (size_t i = 0; i < want.shape.size(); ++i) {
            if (v.type().shape[i].same_as(want.shape[i])) continue;
            operands.push_back(dim_value(out.init_value.value, int(i) + offset, loc));
            checks[i] = {ir::DimCheck::Kind::Operand, int64_t(operands.size()), ""};
          }
          v = SValue::tensor(builder_.check_shape(v.value, std::move(checks), std::move(operands),
                                                  "the step value of state '" + out.name + "'", want.shape, loc),
                             v.loc);
        }
      }
    } else if (v.weak) {
      v = materialize(v, weak_default(v), loc);
    }
  }
  if (!(f.dry_run && out.weak_init)) v = masked_step_value(f, out, v, loc);
  out.step_value = v;
  out.progress = Progress::Done;
}

void Analyzer::report_cycle(ScanFrame& f, const std::string& name, Loc loc) {
  auto& d = diags_.report(DiagId::err_step_cycle, loc, name);
  // The reads since `name`'s definition began: its own read, unless it is where analysis started.
  size_t first = 0;
  for (size_t i = f.reads.size(); i-- > 0;)
    if (f.reads[i].first == name) {
      first = i + 1;
      break;
    }
  for (size_t i = first; i < f.reads.size(); ++i)
    diags_.note(d, DiagId::note_cycle_through, f.reads[i].second, f.reads[i].first);
}

SValue Analyzer::output_read(ScanFrame& f, int o, int64_t k, const ast::Expr& at, Loc loc) {
  ScanFrame::Output& out = f.outputs[size_t(o)];
  (void)at;
  if (k > 0) {
    diags_.report(DiagId::err_future_read, loc, out.name, f.index_name, k);
    return SValue::invalid();
  }
  if (k < 0) {
    if (!out.is_state()) {
      diags_.report(DiagId::err_output_lag_without_init, loc, out.name, f.index_name, -k);
      return SValue::invalid();
    }
    auto it = out.lags.find(-k);
    SCANGEN_CHECK(it != out.lags.end(), "a lag read that the walk did not see");
    SValue v = SValue::tensor(out.lag_params.at(size_t(std::distance(out.lags.begin(), it))), loc);
    if (f.dry_run && out.weak_init) {
      v.weak = true;
      Value p = v.value;
      v.remake = [this, p, loc](DType d) { return d == p.type().dtype ? p : builder_.cast(p, d, loc); };
    }
    return v;
  }
  if (out.progress == Progress::InProgress) {
    report_cycle(f, out.name, loc);
    return SValue::invalid();
  }
  f.reads.emplace_back(out.name, loc);
  ensure_output(f, o);
  f.reads.pop_back();
  SValue v = out.step_value;
  v.loc = loc;
  return v;
}

void Analyzer::ensure_let(ScanFrame& f, int j) {
  ScanFrame::LetInfo& let = f.lets[size_t(j)];
  if (let.progress != Progress::NotStarted) return;
  let.progress = Progress::InProgress;
  RegionGuard region(*this, f.region);
  f.position_stack.push_back(let.position);
  let.values = let_values(*let.stmt, expr(*let.stmt->value, f.body_scope));
  f.position_stack.pop_back();
  let.progress = Progress::Done;
}

SValue Analyzer::let_read(ScanFrame& f, int j, const std::string& n, Loc loc) {
  ScanFrame::LetInfo& let = f.lets[size_t(j)];
  int position = f.position_stack.empty() ? INT_MAX : f.position_stack.back();
  const ast::NameDecl* decl = nullptr;
  size_t index = 0;
  for (size_t i = 0; i < let.stmt->names.size(); ++i)
    if (let.stmt->names[i].name == n) {
      decl = &let.stmt->names[i];
      index = i;
    }
  SCANGEN_CHECK(decl, "let binding without its name");
  if (let.position >= position) {
    auto& d = diags_.report(DiagId::err_use_before_definition, loc, n);
    diags_.note(d, DiagId::note_defined_here, decl->loc, n);
    return SValue::invalid();
  }
  if (let.progress == Progress::InProgress) {
    report_cycle(f, n, loc);
    return SValue::invalid();
  }
  f.reads.emplace_back(n, loc);
  ensure_let(f, j);
  f.reads.pop_back();
  SValue v = let.values.at(index);
  v.loc = loc;
  return v;
}

// One analysis of the body: its parameters, then every definition in text order, then `until`.
// A dry pass (muted) only learns the step's dtypes. Returns the until condition.
SValue Analyzer::step_pass(ScanFrame& f, bool dry) {
  const ast::Scan& s = *f.syntax;
  f.dry_run = dry;
  for (auto& out : f.outputs) {
    out.progress = Progress::NotStarted;
    out.step_value = SValue::invalid();
    out.lag_params.clear();
  }
  for (auto& let : f.lets) {
    let.progress = Progress::NotStarted;
    let.values.clear();
  }
  RegionGuard region(*this, f.region);
  int next_param = 0;
  f.index_param = builder_.param(ir::Type(DType::I64), next_param++, f.index_name, s.loc);
  f.row_masks.clear();
  for (auto& seq : f.sequences) {
    seq.tap_values.clear();
    // In taps order; numbered in the order of the scan's params, which walks the taps of a
    // sequence reversed within its lengths backward (scan_node).
    const std::vector<int64_t> taps(seq.taps.begin(), seq.taps.end());
    const bool backward = f.reverse && f.lengths;
    seq.tap_params.assign(taps.size(), Value());
    for (size_t n = 0; n < taps.size(); ++n) {
      size_t i = backward ? taps.size() - 1 - n : n;
      int64_t k = taps[i];
      std::string name = seq.label + "[" + f.index_name + (k > 0 ? " + " + std::to_string(k) : k < 0 ? " - " + std::to_string(-k) : "") + "]";
      seq.tap_params[i] = builder_.param(seq.value.type().row(), next_param++, name, seq.base->loc);
    }
  }
  for (auto& out : f.outputs)
    for (int64_t k : out.lags)
      out.lag_params.push_back(builder_.param(out.step_type, next_param++,
                                              out.name + "[" + f.index_name + " - " + std::to_string(k) + "]",
                                              out.loc));
  // With lengths, a sequence's row reads 0 once the row has ended.
  for (auto& seq : f.sequences)
    for (const Value& p : seq.tap_params)
      seq.tap_values.push_back(f.lengths ? while_row_takes_part(f, p, nullptr, seq.base->loc) : p);
  frames.push_back(&f);
  for (size_t i = 0; i < s.body.size(); ++i) {
    const ast::Stmt& st = *s.body[i];
    if (st.kind == ast::StmtKind::Let) {
      for (size_t j = 0; j < f.lets.size(); ++j)
        if (f.lets[j].stmt == &st) ensure_let(f, int(j));
    } else if (st.kind == ast::StmtKind::StepDef) {
      for (size_t o = 0; o < f.outputs.size(); ++o)
        if (f.outputs[o].def == &st) ensure_output(f, int(o));
    }
  }
  SValue cond;
  if (f.until) {
    f.position_stack.push_back(int(s.body.size()));
    cond = single(expr(*f.until->cond, f.body_scope), f.until->cond->loc);
    f.position_stack.pop_back();
    if (cond.ok() && (cond.dtype() != DType::Bool || !cond.type().is_scalar())) {
      diags_.report(DiagId::err_until_type, f.until->cond->loc, type_words(cond));
      cond = SValue::invalid();
    }
  }
  frames.pop_back();
  return cond;
}

// States with a bare literal init (`init s = 0`) take the dtype of their step value, learned by a
// dry pass; false when a step value cannot give it.
bool Analyzer::learn_weak_inits(ScanFrame& f, int enclosing_region) {
  diags_.push_mute();
  step_pass(f, /*dry=*/true);
  diags_.pop_mute();
  RegionGuard outer(*this, enclosing_region);
  bool init_ok = true;
  for (auto& out : f.outputs) {
    if (!out.weak_init) continue;
    const SValue& v = out.step_value;
    if (v.ok() && v.weak) {
      // A literal init and a step computed from literals: a float if either is one.
      out.step_type.dtype =
          is_float(v.dtype()) || is_float(out.init_value.dtype()) ? DType::F32 : DType::I64;
    } else if (v.ok()) {
      // A literal init takes the step's dtype, but a number is no bool and a float no integer.
      bool float_init = is_float(out.init_value.dtype());
      if (v.dtype() == DType::Bool || (float_init && is_int(v.dtype()))) {
        auto& d =
            diags_.report(DiagId::err_state_type_mismatch, out.def->value->loc, out.name,
                          v.type().str(), float_init ? "a float literal" : "an integer literal");
        diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
        init_ok = false;
        continue;
      }
      out.step_type.dtype = v.dtype();
    }
    out.init_value = materialize(out.init_value, out.step_type.dtype, out.init->value->loc);
  }
  return init_ok;
}

}  // namespace scangen::sema
