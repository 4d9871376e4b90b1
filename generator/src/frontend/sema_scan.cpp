// Semantic analysis of a scan expression. A scan is analyzed in four steps:
//  1. its options are read and its statements collected: inits, step definitions X[t] = E, lets,
//     until (sema_scan_setup.cpp);
//  2. its body's text is walked to classify every read at the loop index (`E[t + k]`): an output
//     of the scan (a state tap or the current step), or a *sequence* when E is written only with
//     names from outside the scan. Taps come from the text, so every such read counts
//     (sema_scan_taps.cpp);
//  3. sequences, inits and `steps` are analyzed in the enclosing scope;
//  4. the body is analyzed in a region of its own (definitions on demand, so that Y[t] may be read
//     in any order: sema_scan_body.cpp), and the values it uses from outside become the scan's parameters (closure
//     conversion) when the scan node is built.
// A state with a bare literal init (`init s = 0`) takes the dtype of its step value: the body is
// analyzed once silently to learn it, then for real.
#include "frontend/sema_internal.h"
#include "ir/analysis.h"
#include "ir/mutator.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Dim;
using ir::Value;

SValue Analyzer::scan(const ast::Scan& s, Scope& scope) {
  auto frame_owner = std::make_unique<ScanFrame>();
  ScanFrame& f = *frame_owner;
  f.serial = next_frame_serial++;
  f.syntax = &s;
  f.parent = frames.empty() ? nullptr : frames.back();
  const int enclosing_region = current_region();

  // 1, 2: options, statements, names, taps
  bool ok = scan_options(f, scope);
  if (!collect_statements(*this, f)) return SValue::invalid();
  bind_body_names(f, scope);
  classify_taps(*this, f, scope);
  // With lengths a state's rows that have ended keep their previous step: every state reads it.
  if (f.lengths || f.offsets)
    for (auto& out : f.outputs)
      if (out.is_state()) out.lags.insert(1);

  // 3: sequences and inits, in the enclosing scope
  ok = scan_sequences(f, scope) && ok;
  bool any_weak_init = false;
  ok = scan_inits(f, scope, &any_weak_init) && ok;
  if (!ok || !scan_lengths(f)) return SValue::invalid();

  // 4: the body, then the scan node
  f.region = new_region(enclosing_region);
  if (any_weak_init && !learn_weak_inits(f, enclosing_region)) return SValue::invalid();
  SValue cond = step_pass(f, /*dry=*/false);
  for (auto& out : f.outputs) ok = ok && out.step_value.ok();
  if (f.until && !cond.ok()) ok = false;
  if (!ok) return SValue::invalid();
  SValue result = scan_node(f, cond);
  return f.offsets && result.ok() ? packed_outputs(f, result) : result;
}

// The sequences; false when one of them had an error.
bool Analyzer::scan_sequences(ScanFrame& f, Scope& scope) {
  bool ok = true;
  // A sequence that names nothing known may be a misspelled output (`stat[t - 1]`).
  Scope* saved_spelling_scope = spelling_scope;
  spelling_scope = &f.body_scope;
  for (auto& seq : f.sequences) {
    // In a nested scan, Y[t] of an output Y of an enclosing scan that also calls its index t
    // reads Y as a sequence of this scan: almost certainly not what was meant.
    if (seq.base->kind == ast::ExprKind::Name) {
      const std::string& n = ast::as<ast::Name>(*seq.base).name;
      Binding* b = scope.find(n);
      if (b && b->kind == Binding::Kind::Output && b->frame->index_name == f.index_name) {
        diags_.report(DiagId::err_index_shadow_ambiguous, seq.base->loc, f.index_name,
                      "the loop index of the enclosing scan that defines '" + n + "'");
        ok = false;
        continue;
      }
    }
    seq.value = single(expr(*seq.base, scope), seq.base->loc);
    if (seq.value.ok() && seq.value.weak)
      seq.value = materialize(seq.value, weak_default(seq.value), seq.base->loc);
    if (seq.value.ok() && seq.value.type().is_scalar()) {
      diags_.report(DiagId::err_sequence_scalar, seq.base->loc, seq.label);
      seq.value = SValue::invalid();
    }
    ok = ok && seq.value.ok();
  }
  spelling_scope = saved_spelling_scope;
  if (!f.steps_given && f.sequences.empty()) {
    diags_.report(DiagId::err_scan_no_steps, f.syntax->loc);
    ok = false;
  }
  return ok;
}

// The inits of the states; false when one of them had an error. A bare literal init stays weak
// (*any_weak_init) until the step gives it a dtype.
bool Analyzer::scan_inits(ScanFrame& f, Scope& scope, bool* any_weak_init) {
  bool ok = true;
  for (auto& out : f.outputs) {
    if (!out.is_state()) continue;
    SValue init = single(expr(*out.init->value, scope), out.init->value->loc);
    if (!init.ok()) {
      ok = false;
      continue;
    }
    int64_t rows = out.lags.empty() ? 0 : *out.lags.rbegin();
    Loc loc = out.init->value->loc;
    if (init.weak && rows <= 1) {
      out.weak_init = true;
      *any_weak_init = true;
      out.step_type = ir::Type(weak_default(init), init.type().shape);
      out.init_value = init;
      continue;
    }
    if (init.weak) init = materialize(init, weak_default(init), loc);
    if (rows > 1) {
      // The init holds one row per step read: init[0] is X[t - rows] at step 0.
      const ir::Type& t = init.type();
      if (t.is_scalar() || (t.shape[0].is_const() && !t.shape[0].is_const(rows))) {
        std::vector<Dim> want{Dim::constant(rows)};
        if (!t.is_scalar()) want.insert(want.end(), t.shape.begin() + 1, t.shape.end());
        auto& d = diags_.report(DiagId::err_init_shape, loc, out.name, ir::shape_str(want), ir::shape_str(t.shape));
        diags_.note(d, DiagId::note_init_lags, out.loc, out.name, rows, plural(size_t(rows)));
        ok = false;
        continue;
      }
      if (!t.shape[0].is_const(rows)) {
        std::vector<ir::DimCheck> checks(size_t(t.rank()));
        checks[0] = {ir::DimCheck::Kind::Const, rows, ""};
        std::vector<Dim> shape = t.shape;
        shape[0] = Dim::constant(rows);
        init = SValue::tensor(builder_.check_shape(init.value, std::move(checks), {},
                                                   "the init of state '" + out.name + "'", shape, loc),
                              init.loc);
      }
      out.step_type = init.type().row();
    } else {
      out.step_type = init.type();
    }
    out.init_value = init;
  }
  return ok;
}

// Closure conversion, then the scan node: the outside values the body uses become its parameters.
SValue Analyzer::scan_node(ScanFrame& f, const SValue& cond) {
  ir::ScanInfo info;
  info.has_steps = f.steps.has_value();
  // With lengths, reversed sequences are walked forward (scan_lengths).
  info.reverse = f.reverse && !f.lengths;
  info.parallel = f.parallel;
  info.has_until = f.until != nullptr;
  info.truncate_gradient = f.truncate_gradient;
  info.checkpoint = f.checkpoint;
  info.index_name = f.index_name;
  auto body = std::make_shared<ir::Graph>();
  body->params.push_back(f.index_param);
  for (const auto& seq : f.sequences) {
    std::vector<int64_t> taps(seq.taps.begin(), seq.taps.end());
    if (f.reverse && f.lengths) {
      // Rows reversed within their lengths, read forward: tap k of `reverse` is tap -k.
      std::vector<int64_t> forward;
      for (auto k = seq.taps.rbegin(); k != seq.taps.rend(); ++k) forward.push_back(-*k);
      info.sequences.push_back({forward, seq.label, taps});
      for (auto p = seq.tap_params.rbegin(); p != seq.tap_params.rend(); ++p) body->params.push_back(*p);
      continue;
    }
    info.sequences.push_back({taps, seq.label, taps});
    for (const Value& p : seq.tap_params) body->params.push_back(p);
  }
  for (const auto& out : f.outputs) {
    if (out.is_state()) {
      info.states.push_back({out.name, std::vector<int64_t>(out.lags.begin(), out.lags.end())});
      for (const Value& p : out.lag_params) body->params.push_back(p);
    } else {
      info.outputs.push_back(out.name);
    }
  }
  std::vector<Value> results;
  for (const auto& out : f.outputs) results.push_back(out.step_value.value);
  results = steps_on_real_rows(f, results);
  if (f.until) results.push_back(cond.value);

  std::vector<Value> captured_outer;
  {
    RegionGuard region(*this, f.region);
    std::unordered_map<const ir::Node*, ir::NodeRef> converted;
    std::unordered_map<Value, Value, ir::ValueHash> captures;
    std::function<Value(const Value&)> convert = [&](const Value& v) -> Value {
      int r = region_of(v.node.get());
      if (r != f.region) {
        SCANGEN_CHECK(region_is_ancestor(r, f.region), "a scan body uses a value from outside its scope");
        auto it = captures.find(v);
        if (it != captures.end()) return it->second;
        std::string n = "p" + std::to_string(captured_outer.size());
        if (const auto* p = v.node->as<ir::ParamNode>()) n = p->name();
        Value param = builder_.param(v.type(), int(body->params.size()), n, v.node->loc());
        body->params.push_back(param);
        captured_outer.push_back(v);
        captures.emplace(v, param);
        return param;
      }
      auto it = converted.find(v.node.get());
      if (it != converted.end()) return Value(it->second, v.index);
      std::vector<Value> inputs;
      bool changed = false;
      for (const Value& in : v.node->inputs()) {
        inputs.push_back(convert(in));
        changed = changed || inputs.back() != in;
      }
      ir::NodeRef n = changed ? builder_.rebuild(*v.node, std::move(inputs)) : v.node;
      converted.emplace(v.node.get(), n);
      return Value(n, v.index);
    };
    for (const Value& r : results) body->results.push_back(convert(r));
  }
  info.num_params = int(captured_outer.size());

  std::vector<Value> inputs;
  if (f.steps) inputs.push_back(f.steps->value);
  for (const auto& seq : f.sequences) inputs.push_back(seq.value.value);
  for (const auto& out : f.outputs)
    if (out.is_state()) inputs.push_back(out.init_value.value);
  inputs.insert(inputs.end(), captured_outer.begin(), captured_outer.end());

  // The static number of steps.
  Dim steps = Dim::fresh_unknown();
  if (f.until) {
    // data-dependent
  } else if (f.steps) {
    if (f.steps->as_dim) steps = *f.steps->as_dim;
    if (auto c = ir::constant_value(f.steps->value)) steps = Dim::constant(c->i);
  } else {
    std::optional<Dim> common;
    bool same = true;
    for (size_t i = 0; i < f.sequences.size(); ++i) {
      const auto& seq = f.sequences[i];
      Dim d = seq.value.type().shape[0].plus(-info.sequences[i].span());
      if (auto c = d.const_value(); c && *c < 0) d = Dim::constant(0);
      if (!common) common = d;
      else if (!common->same_as(d)) same = false;
    }
    if (same && common) steps = *common;
  }

  std::vector<Value> outs = builder_.scan(std::move(inputs), std::move(info), body, steps, f.syntax->loc);
  // A per-step output has the same shape at every step, computable before the first step (so that
  // its buffer is allocated once and a scan of zero steps knows its step shape). A state's shape is
  // its init's, checked at each step.
  {
    const auto& scan_node = *outs.front().node->as<ir::ScanNode>();
    ir::StepVariance variance(scan_node);
    bool varies = false;
    for (size_t i = size_t(f.num_states); i < f.outputs.size(); ++i) {
      if (!variance.shape_varies(scan_node.body().results[i])) continue;
      diags_.report(DiagId::err_output_shape_varies, f.outputs[i].def->value->loc, f.outputs[i].name);
      varies = true;
    }
    if (varies) return SValue::invalid();
  }
  SValue result;
  result.kind = SValue::Kind::Multi;
  result.from_scan = true;
  result.loc = f.syntax->loc;
  for (size_t i = 0; i < outs.size(); ++i) {
    result.elements.push_back(SValue::tensor(outs[i], f.syntax->loc));
    result.names.push_back(f.outputs[i].name);
  }
  return result;
}

}  // namespace scangen::sema
