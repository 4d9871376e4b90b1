// Internals of semantic analysis, shared by its files (docs/architecture.md, "The frontend").
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "frontend/sema.h"
#include "ir/builder.h"
#include "ir/fold.h"

namespace scangen::sema {

// What an expression means during analysis.
struct SValue {
  enum class Kind {
    Invalid,  // an error was reported; further errors about it are suppressed
    Tensor,   // one IR value
    Multi,    // several values: a call of a function with several results, or a scan's outputs
    DType,    // a type name used as an argument: zeros(f32, n)
  };
  Kind kind = Kind::Invalid;
  ir::Value value;
  // A weakly typed value (a literal, or computed only from literals): it takes the dtype of the
  // operand it meets. `remake` builds the same computation at another dtype.
  bool weak = false;
  std::function<ir::Value(DType)> remake;
  // An integer scalar known to equal this dimension (n for a scalar parameter n, len(x) for x's
  // first dimension); gives results of arange/zeros/steps a static shape.
  std::optional<ir::Dim> as_dim;
  std::vector<SValue> elements;  // Multi
  std::vector<std::string> names;  // Multi: a name per element (scan output names, result names)
  bool from_scan = false;          // Multi: the outputs of a scan (bound by name)
  std::string callee;              // Multi: the function whose results these are
  DType dtype_ref = DType::F32;    // DType
  Loc loc;

  static SValue invalid() { return SValue{}; }
  static SValue tensor(ir::Value v, Loc l) {
    SValue s;
    s.kind = Kind::Tensor;
    s.value = std::move(v);
    s.loc = l;
    return s;
  }
  bool ok() const { return kind != Kind::Invalid; }
  bool is_tensor() const { return kind == Kind::Tensor; }
  const ir::Type& type() const { return value.type(); }
  DType dtype() const { return value.type().dtype; }
};

struct ScanFrame;
struct Builtin;

class Analyzer;
struct ScanFrame;
struct Scope;
// The scan options `lengths = L` and `offsets = O` (sema_scan_lengths.cpp).
bool lengths_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope);
bool offsets_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope);

// An integer literal, possibly negated (the form `axis = i` and reshape's -1 take).
std::optional<int64_t> int_literal_value(const ast::Expr& e);

// A name in scope.
struct Binding {
  enum class Kind {
    Value,    // a bound value (parameter, let, result of a scan)
    Output,   // an output (state or per-step) of the scan being analyzed
    Index,    // the loop index of a scan
    Let,      // a let in a scan body, analyzed on demand
  };
  Kind kind = Kind::Value;
  SValue value;
  ScanFrame* frame = nullptr;
  int slot = -1;  // Output: index into frame->outputs; Let: index into frame->lets
  Loc loc;
  int id = 0;     // unique: two uses of the same binding have the same id
};

struct Scope {
  Scope* parent = nullptr;
  std::map<std::string, Binding> names;
  Binding* find_local(const std::string& n) {
    auto it = names.find(n);
    return it == names.end() ? nullptr : &it->second;
  }
  Binding* find(const std::string& n) {
    for (Scope* s = this; s; s = s->parent)
      if (Binding* b = s->find_local(n)) return b;
    return nullptr;
  }
};

// How a tap read `E[t + k]` of some scan was classified when the scan's body was examined.
struct TapRead {
  ScanFrame* frame = nullptr;
  int frame_serial = 0;  // frames are identified by serial, not address (addresses are reused)
  enum class Kind { Sequence, Output } kind = Kind::Sequence;
  int slot = 0;   // sequence or output index in the frame
  int64_t k = 0;  // the offset: +k for t + k, -k for t - k
};

enum class Progress { NotStarted, InProgress, Done };

// Everything known about one scan while its body is analyzed.
struct ScanFrame {
  int serial = 0;
  const ast::Scan* syntax = nullptr;
  ScanFrame* parent = nullptr;  // the enclosing scan, if nested
  int region = 0;                // region of the body's nodes
  std::string index_name = "t";
  Loc index_loc;
  bool reverse = false;
  bool parallel = false;
  int64_t truncate_gradient = -1;
  int64_t checkpoint = 0;
  std::optional<SValue> steps;
  bool steps_given = false;  // `steps` (or an unknown option with a value) bounds it, even if wrong
  // `lengths = L` (i64[B]) and L after its check against the steps (sema_scan_lengths.cpp).
  std::optional<SValue> lengths;
  Loc lengths_loc;
  ir::Value checked_lengths;
  // `offsets = O` (i64[B + 1], sema_scan_offsets.cpp): lengths is then computed from O, and
  // starts[b] = O[b] is where packed sequence b starts.
  std::optional<SValue> offsets;
  Loc offsets_loc;
  ir::Value starts;
  ir::Value packed_rows;  // N: the rows of every packed sequence and per-step output
  // The batch size B, statically and as a value.
  ir::Dim batch_dim;
  ir::Value batch_size;
  std::map<int, ir::Value> row_masks;  // per step pass: t < L[b] as bool [B, 1, ...], by rank

  struct Output {
    std::string name;
    Loc loc;                              // of the X[t] = ... target
    const ast::Init* init = nullptr;      // a state when set
    const ast::StepDef* def = nullptr;
    int stmt = 0;                         // position of the definition in the body
    std::set<int64_t> lags;               // k of every X[t - k] read (states)
    SValue init_value;                    // analyzed in the enclosing scope
    ir::Type step_type;                   // the type of one step (states: from the init)
    bool weak_init = false;
    // per analysis pass:
    Progress progress = Progress::NotStarted;
    SValue step_value;
    std::vector<ir::Value> lag_params;    // body params, one per lag (in lags order)
    bool is_state() const { return init != nullptr; }
  };
  std::vector<Output> outputs;  // states first, then per-step outputs, each in text order
  int num_states = 0;

  struct Sequence {
    std::string key;               // canonical text: two sequences written the same are one
    const ast::Expr* base = nullptr;
    std::set<int64_t> taps;
    std::string label;
    SValue value;                  // analyzed in the enclosing scope
    std::vector<ir::Value> tap_params;  // body params, one per tap (in taps order)
    // What reads of each tap give: the params, or with `lengths` each row's tap while the row
    // takes part and 0 after (sema_scan_lengths.cpp).
    std::vector<ir::Value> tap_values;
    // The steps the taps lose: M - m, as ir::ScanSequence::span().
    int64_t span() const { return std::max<int64_t>(*taps.rbegin(), 0) - std::min<int64_t>(*taps.begin(), 0); }
  };
  std::vector<Sequence> sequences;

  struct LetInfo {
    const ast::Let* stmt = nullptr;
    int position = 0;
    Progress progress = Progress::NotStarted;
    std::vector<SValue> values;  // one per name
  };
  std::vector<LetInfo> lets;
  const ast::Until* until = nullptr;
  std::vector<const ast::Init*> lone_inits;  // inits of no state: reported, then read as errors

  Scope body_scope;
  ir::Value index_param;
  std::vector<int> position_stack;  // statement positions being analyzed (for let visibility)
  // The reads of Y[t] and of lets whose definitions are being analyzed, innermost last (to show
  // the path of a cycle).
  std::vector<std::pair<std::string, Loc>> reads;
  bool dry_run = false;
};

// The environment of one analyzed function body (a top-level function, or an inlined call).
struct FunctionEnv {
  const ast::FnDecl* decl = nullptr;
  // Dimension symbols of the signature: their static Dim and their run-time value (an i64).
  struct Symbol {
    ir::Dim dim;
    ir::Value runtime;
    Loc loc;              // where it is bound
    std::string source;   // "dimension 0 of 'x'" or "parameter 'n'"
  };
  std::map<std::string, Symbol> symbols;
  Scope scope;
  // Lets of the body not yet reached, by name, for "used before its definition".
  std::map<std::string, Loc> later_lets;
};

// The analyzer's view of the diagnostic engine. A function body is analyzed on its own and again
// for every call that inlines it, so the same error would be reported once per analysis: a report
// identical to an earlier one (the same message at the same place) is dropped, with its notes.
class SemaDiagnostics {
 public:
  explicit SemaDiagnostics(DiagnosticEngine& engine) : engine_(engine) {}

  template <class... Args>
  Diagnostic& report(DiagId id, Loc loc, const Args&... args) {
    if (!engine_.muted()) {
      std::string message = fmt::format(fmt::runtime(diag_format(id)), args...);
      if (!seen_.emplace(loc.file, loc.line, loc.col, std::move(message)).second) {
        if (diag_severity(id) == Severity::Error) ++dropped_errors_;
        dropped_ = Diagnostic{id, diag_severity(id), loc, {}, {}};
        return dropped_;
      }
    }
    return engine_.report(id, loc, args...);
  }
  template <class... Args>
  void note(Diagnostic& d, DiagId id, Loc loc, const Args&... args) {
    engine_.note(d, id, loc, args...);
  }
  bool has_errors() const { return error_count() > 0; }
  // Errors reported so far, the dropped repetitions included.
  int error_count() const { return engine_.error_count() + dropped_errors_; }
  void push_mute() { engine_.push_mute(); }
  void pop_mute() { engine_.pop_mute(); }

 private:
  DiagnosticEngine& engine_;
  std::set<std::tuple<int, int32_t, int32_t, std::string>> seen_;
  Diagnostic dropped_{DiagId::kCount, Severity::Error, {}, {}, {}};
  int dropped_errors_ = 0;
};

class Analyzer {
 public:
  Analyzer(const ast::Module& module, const SourceManager& sources, DiagnosticEngine& diags,
           std::vector<ir::ImportRef> imports);
  std::optional<ir::Program> run();

  // ---- shared helpers (sema.cpp)
  SemaDiagnostics& diags() { return diags_; }
  ir::Builder& builder() { return builder_; }
  int new_binding_id() { return next_binding_id_++; }
  int current_region() const { return region_; }
  int new_region(int parent);
  bool region_is_ancestor(int ancestor, int region) const;
  int region_of(const ir::Node* n) const;

  // ---- expressions (sema_expr.cpp)
  SValue expr(const ast::Expr& e, Scope& scope);
  // A value usable in arithmetic: a single tensor (first output of an inline scan); reports and
  // returns Invalid otherwise.
  SValue single(SValue v, Loc loc, const char* context = nullptr);
  // The dtype two operands meet at, or nullopt (reported) when they cannot.
  struct Promotion {
    DType dtype;
    bool weak;
  };
  std::optional<Promotion> promote(const SValue& a, const SValue& b, Loc loc, const char* op);
  SValue binary(ir::BinaryOp op, SValue a, SValue b, Loc loc, const char* spelling);
  // where(c, a, b) and c ? a : b; `name` is "where" or "?:".
  SValue select(SValue c, SValue a, SValue b, Loc loc, const char* name);

  // ---- weak literals and their folding (sema_literals.cpp)
  SValue int_literal(int64_t v, Loc loc);
  SValue float_literal(double v, Loc loc);
  SValue constant(ir::Scalar s, Loc loc);
  SValue materialize(const SValue& v, DType dtype, Loc loc);
  // A weak value used where nothing gives it a dtype takes its default one (weak_default).
  SValue concrete(const SValue& v, Loc loc);
  // Operations of weak constants, folded to a weak literal (or an error, reported).
  SValue fold_literal(ir::UnaryOp op, const ir::Scalar& x, Loc loc);
  SValue fold_literals(ir::BinaryOp op, const ir::Scalar& a, const ir::Scalar& b, Loc loc);
  SValue folded_literal(const std::optional<ir::Folded>& r, Loc loc);

  // ---- indexing (sema_index.cpp)
  SValue to_index_i64(const SValue& v, Loc loc, const char* what);
  ir::Value dim_value(const ir::Value& x, int axis, Loc loc);
  SValue index_expr(const ast::Index& e, Scope& scope);
  // Reports (and returns true for) an output of a scan indexed other than at a step.
  bool misread_output(const ast::Index& e, Scope& scope);
  // Analyzes index items [first, end) against a value of type `base`; false when errors were reported.
  bool index_specs(const ir::Type& base, const std::vector<ast::IndexItem>& items, size_t first, Scope& scope,
                   Loc loc, std::vector<ir::IndexSpec>* specs, std::vector<ir::Value>* operands,
                   const SValue* first_value = nullptr);
  SValue gather_index(const SValue& base, const SValue& idx, const std::vector<ast::IndexItem>& items, size_t first,
                      Scope& scope, Loc loc);
  SValue apply_index(SValue base, const std::vector<ast::IndexItem>& items, size_t first_item,
                     Scope& scope, Loc loc);

  // ---- calls (sema_call.cpp)
  SValue call(const ast::Call& c, Scope& scope);
  SValue cast_call(const ast::Call& c, Scope& scope);
  SValue call_function(const ast::FnDecl& fn, const ast::Call& c, Scope& scope);
  bool recursive_call(const ast::FnDecl& fn, const ast::Call& c);
  bool bind_arguments(const ast::FnDecl& fn, const ast::Call& c, std::vector<SValue>& args, FunctionEnv& callee);

  // ---- names (sema_names.cpp)
  SValue name(const ast::Name& n, Scope& scope);
  SValue unknown_name(const ast::Name& n, Scope& scope);
  SValue unknown_function(const ast::Call& c, Scope& scope);
  // Set while a scan's sequences are analyzed: the scan's body scope, whose outputs an unknown
  // name may misspell (`stat[t - 1]` for the state `state` reads like a sequence).
  Scope* spelling_scope = nullptr;

  // ---- imported C++ functions (sema_imports.cpp)
  // Makes the imported functions callable by name, reporting names that conflict.
  void register_imports();
  SValue imported_call(const ast::Call& c, Scope& scope, const ir::ImportRef& import, int function);
  // A call of a function of a header that scangen cannot call: an error with the reasons.
  SValue unusable_call(const ast::Call& c, Scope& scope, const ir::Import& import, const ir::UnusableFunction& f);
  // The reasons why `f` cannot be called, as notes of `d`.
  void note_unusable(Diagnostic& d, const ir::UnusableFunction& f);
  // The unusable function `name` of an imported header, or nullptr.
  const ir::UnusableFunction* find_unusable(const std::string& name, const ir::Import** import = nullptr) const;

  // ---- builtins: the checks of builtins.def (builtins.cpp), then a handler of its row
  SValue builtin_call(const Builtin& b, const ast::Call& c, Scope& scope);
  bool builtin_arguments_fit(const Builtin& b, const ast::Call& c);
  // math, reductions, construction, updates, gradients (sema_builtins.cpp)
  SValue float_math_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue numeric_math_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue relu_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue binary_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue min_max_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue clip_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue where_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue reduce_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue zeros_like_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue ones_like_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue full_like_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue zeros_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue ones_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue arange_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue len_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue update_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue grad_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue stop_gradient_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue sequence_mask_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue reverse_sequence_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue argument(const ast::Call& c, size_t i, Scope& scope);
  bool not_bool(const ast::Call& c, const SValue& v);
  SValue like(const ast::Call& c, Scope& scope, bool one);
  SValue filled_like(const SValue& x, const SValue& fill, Loc loc);
  SValue filled(const ast::Call& c, Scope& scope, bool one);
  SValue stored_value(const ast::Call& c, const SValue& x, const SValue& v);
  // selection and layout (sema_selection.cpp)
  SValue arg_extreme_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue top_k_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue transpose_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue reshape_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue flip_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue concat_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue stack_call(const ast::Call& c, Scope& scope, const Builtin& b);
  SValue join(const ast::Call& c, Scope& scope, bool stack);
  bool axis_keyword(const ast::Call& c, int rank, int extra, std::optional<int>* axis);
  SValue numeric_array_arg(const ast::Call& c, size_t i, Scope& scope, bool allow_scalar);
  // x[idx] for an integer array idx.
  SValue gather_rows(const SValue& x, const SValue& idx, Loc idx_loc, Loc loc);
  bool concat_pieces(const ast::Call& c, Scope& scope, std::vector<SValue>* pieces);
  SValue joined(const ast::Call& c, const std::vector<SValue>& pieces, int axis);
  ir::Value same_sides(const ast::Call& c, const SValue& piece, const SValue& first, int axis, size_t i);
  // grad(C, w) and grad(C, (w1, w2, ...)) (sema_grad.cpp).
  SValue grad(const ast::Call& c, Scope& scope);

  // ---- functions (sema.cpp)
  ir::Function analyze_entry(const ast::FnDecl& fn);
  // Analyzes a function body with the environment set up; returns its results.
  std::vector<SValue> function_body(const ast::FnDecl& fn, FunctionEnv& env);
  // `let x = scan {...}` and `let (a, b) = scan {...}` bind outputs by name; a single name may
  // also bind the only output of a scan.
  SValue scan_output_by_name(const SValue& outputs, const ast::NameDecl& n, bool only_output_fits);
  ir::Type declared_type(const ast::TypeDecl& t, FunctionEnv* env_for_symbols);
  // Checks v against a declared type: statically when it can, else by a CheckShape node.
  SValue conform(SValue v, const ast::TypeDecl& decl, FunctionEnv& env, const std::string& what,
                 Loc loc, bool runtime_check);

  // ---- scans (sema_scan.cpp, and its steps in sema_scan_setup.cpp, sema_scan_taps.cpp and
  // sema_scan_body.cpp)
  SValue scan(const ast::Scan& s, Scope& scope);
  bool scan_options(ScanFrame& f, Scope& scope);
  void bind_body_names(ScanFrame& f, Scope& scope);
  bool scan_sequences(ScanFrame& f, Scope& scope);
  bool scan_inits(ScanFrame& f, Scope& scope, bool* any_weak_init);
  bool learn_weak_inits(ScanFrame& f, int enclosing_region);
  SValue step_pass(ScanFrame& f, bool dry);
  SValue scan_node(ScanFrame& f, const SValue& cond);
  SValue output_read(ScanFrame& f, int output, int64_t k, const ast::Expr& at, Loc loc);
  // `lengths` (sema_scan_lengths.cpp)
  bool scan_lengths(ScanFrame& f);
  bool batch_inits(ScanFrame& f);
  // `offsets` (sema_scan_offsets.cpp)
  bool packed_batch(ScanFrame& f);
  ir::Value padded_sequence(const ScanFrame& f, const ir::Value& packed, Loc loc);
  SValue packed_outputs(const ScanFrame& f, SValue result);
  SValue batch_checked(ScanFrame& f, const SValue& v, int axis, const std::string& what, const char* axis_text, Loc loc);
  ir::Value reversed_rows(const ScanFrame& f, const ScanFrame::Sequence& seq, Loc loc);
  ir::Value gathered_in_columns(const ir::Value& u, const ir::Value& source, Loc loc);
  std::pair<ir::Value, ir::Value> rows_and_lengths(const ir::Value& u, const ir::Value& lengths, Loc loc);
  ir::Value steps_before_scan(const ScanFrame& f, Loc loc);
  ir::Value row_mask(ScanFrame& f, int rank, Loc loc);
  ir::Value while_row_takes_part(ScanFrame& f, const ir::Value& v, const ir::Value* otherwise, Loc loc);
  SValue masked_step_value(ScanFrame& f, ScanFrame::Output& out, SValue v, Loc loc);
  // The step's results with rows that have ended computing on a real row's inputs
  // (sema_scan_real_rows.cpp), or as they are.
  std::vector<ir::Value> steps_on_real_rows(ScanFrame& f, const std::vector<ir::Value>& results);
  SValue let_read(ScanFrame& f, int let, const std::string& name, Loc loc);
  void ensure_output(ScanFrame& f, int output);
  // '`name` depends on itself', with a note at each read on the way round.
  void report_cycle(ScanFrame& f, const std::string& name, Loc loc);
  void ensure_let(ScanFrame& f, int let);
  // The values a let binds to its names (by name for a scan's outputs, by position for a call).
  std::vector<SValue> let_values(const ast::Let& let, const SValue& v);
  int next_frame_serial = 1;
  const TapRead* tap_read_of(const ast::Expr& e) const;

  // Which scan frames are being analyzed (innermost last).
  std::vector<ScanFrame*> frames;
  // The function being analyzed and the calls being inlined into it, to detect recursion;
  // call_locs[i] is where call_stack[i] is called (for the entry function, its name).
  std::vector<const ast::FnDecl*> call_stack;
  std::vector<Loc> call_locs;
  // The functions of each cycle of calls reported, so that a cycle is reported once.
  std::set<std::set<const ast::FnDecl*>> reported_cycles;
  std::unordered_map<const ast::Expr*, TapRead> tap_reads;
  std::map<std::string, const ast::FnDecl*> functions;
  // Imported functions by name: (import, index in its functions).
  std::map<std::string, std::pair<ir::ImportRef, int>> imported_functions;
  FunctionEnv* env = nullptr;

 private:
  const ast::Module& module_;
  const SourceManager& sources_;
  std::vector<ir::ImportRef> imports_;
  SemaDiagnostics diags_;
  ir::Builder builder_;
  int next_binding_id_ = 1;
  int region_ = 0;
  std::vector<int> region_parent_;
  std::unordered_map<const ir::Node*, int> region_of_;

  friend class RegionGuard;
 public:
  void set_region(int r) { region_ = r; }
};

// Enters a region for the lifetime of the guard.
class RegionGuard {
 public:
  RegionGuard(Analyzer& a, int region) : a_(a), saved_(a.current_region()) { a.set_region(region); }
  ~RegionGuard() { a_.set_region(saved_); }

 private:
  Analyzer& a_;
  int saved_;
};

std::string plural(size_t n);
// Step 1 of a scan: collects the statements of its body; false when nothing can be analyzed.
bool collect_statements(Analyzer& a, ScanFrame& f);
// Step 2 of a scan: classifies the reads at the loop index in its body's text (Analyzer::tap_reads).
void classify_taps(Analyzer& a, ScanFrame& f, Scope& enclosing);
// "the result of 'f'", or "result i of 'f'" for a function of several results.
std::string result_words(const ast::FnDecl& fn, size_t i);
// A value's type for messages: "f32[n]", or "an integer literal" for a weak value.
std::string type_words(const SValue& v);
// The dtype a weak value takes when nothing gives it one: i64 (integers) or f32 (floats).
DType weak_default(const SValue& v);
// The exact value of a weak constant (an i64 or f64 constant), or nullopt.
std::optional<ir::Scalar> weak_constant(const SValue& v);

}  // namespace scangen::sema
