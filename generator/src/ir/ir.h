// The program-level IR: an immutable dataflow graph of tensor operations whose nodes include scan
// nodes, each owning the graph of one step (so nesting is natural).
//
// Nodes are immutable and shared (std::shared_ptr<const Node>); a Value names one output of a
// node. A Graph is its parameters and its results: the nodes that matter are exactly those the
// results reach, so unused computations disappear by construction. Nodes are created only by the
// factories of ir/builder.h, which check types; rewrites build new graphs with ir/mutator.h.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/runtime_errors.h"
#include "ir/type.h"
#include "support/source.h"

namespace scangen::ir {

enum class NodeKind {
#define IR_NODE(kind, name, checks) kind,
#include "ir/nodes.def"
#undef IR_NODE
};

enum class UnaryOp {
#define UNARY_OP(op, name, ints) op,
#include "ir/ops.def"
#undef UNARY_OP
};

enum class BinaryOp {
#define BINARY_OP(op, name, cls) op,
#include "ir/ops.def"
#undef BINARY_OP
};

enum class ReduceOp {
#define REDUCE_OP(op, name) op,
#include "ir/ops.def"
#undef REDUCE_OP
};

enum class AssocOp {
#define ASSOC_OP(op, name, helper) op,
#include "ir/ops.def"
#undef ASSOC_OP
};

enum class BinaryClass { Arith, Compare, Logic };

const char* node_kind_name(NodeKind k);
const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);
const char* reduce_op_name(ReduceOp op);
const char* assoc_op_name(AssocOp op);
// The runtime helper a backend calls for a scan of this operator (templates/*/: scan_affine, ...).
const char* assoc_op_helper(AssocOp op);
BinaryClass binary_op_class(BinaryOp op);
// Whether the unary operator is defined on integer operands (the rest need floats).
bool unary_op_allows_int(UnaryOp op);

class Node;
using NodeRef = std::shared_ptr<const Node>;

// One output of a node.
struct Value {
  NodeRef node;
  int index = 0;

  Value() = default;
  Value(NodeRef n, int i = 0) : node(std::move(n)), index(i) {}
  explicit operator bool() const { return node != nullptr; }
  const Type& type() const;
  bool operator==(const Value& o) const { return node == o.node && index == o.index; }
  bool operator!=(const Value& o) const { return !(*this == o); }
};

struct ValueHash {
  size_t operator()(const Value& v) const {
    return std::hash<const void*>()(v.node.get()) * 31 + static_cast<size_t>(v.index);
  }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }
  const std::vector<Value>& inputs() const { return inputs_; }
  const Value& input(int i) const { return inputs_.at(static_cast<size_t>(i)); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<Type>& output_types() const { return output_types_; }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const Loc& loc() const { return loc_; }
  Value output(int i = 0) const { return Value(shared_from_this(), i); }

  template <class T> const T* as() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  Node(NodeKind kind, std::vector<Value> inputs, std::vector<Type> outputs, Loc loc)
      : kind_(kind), inputs_(std::move(inputs)), output_types_(std::move(outputs)), loc_(loc) {}

 private:
  NodeKind kind_;
  std::vector<Value> inputs_;
  std::vector<Type> output_types_;
  Loc loc_;
};

inline const Type& Value::type() const { return node->output_types()[static_cast<size_t>(index)]; }

// ---- scalars

struct Scalar {
  DType dtype = DType::I64;
  int64_t i = 0;   // bool, i32, i64
  double f = 0;    // f32, f64 (an f32 constant holds a value exactly representable in f32)

  static Scalar of_int(DType d, int64_t v);
  static Scalar of_float(DType d, double v);
  static Scalar of_bool(bool b);
  static Scalar zero(DType d);  // 0 of any dtype (false for bool)
  double as_double() const { return is_float(dtype) ? f : static_cast<double>(i); }
  bool operator==(const Scalar& o) const;
  std::string str() const;  // as printed in IR and in emitted code comments
};

// ---- node classes (one per entry of nodes.def)

#define SCANGEN_NODE_KIND(K) static constexpr NodeKind kKind = NodeKind::K

// A graph parameter: function arguments, and in a scan body the loop index, the sequence and state
// taps and the scan's parameters.
class ParamNode : public Node {
 public:
  SCANGEN_NODE_KIND(Param);
  ParamNode(Type type, int index, std::string name, Loc loc)
      : Node(kKind, {}, {std::move(type)}, loc), index_(index), name_(std::move(name)) {}
  int index() const { return index_; }
  const std::string& name() const { return name_; }

 private:
  int index_;
  std::string name_;
};

// A scalar literal.
class ConstantNode : public Node {
 public:
  SCANGEN_NODE_KIND(Constant);
  ConstantNode(Scalar value, Loc loc) : Node(kKind, {}, {Type(value.dtype)}, loc), value_(value) {}
  const Scalar& value() const { return value_; }

 private:
  Scalar value_;
};

// arange(start, stop): i64[max(stop - start, 0)]. Inputs: start, stop (i64 scalars).
class ArangeNode : public Node {
 public:
  SCANGEN_NODE_KIND(Arange);
  ArangeNode(Value start, Value stop, Type type, Loc loc)
      : Node(kKind, {std::move(start), std::move(stop)}, {std::move(type)}, loc) {}
};

// A tensor of one repeated value. Inputs: the value (a scalar of the result dtype), then one i64
// scalar per dimension.
class FillNode : public Node {
 public:
  SCANGEN_NODE_KIND(Fill);
  FillNode(std::vector<Value> inputs, Type type, Loc loc)
      : Node(kKind, std::move(inputs), {std::move(type)}, loc) {}
};

// The size of one dimension of a value, as an i64 scalar.
class DimSizeNode : public Node {
 public:
  SCANGEN_NODE_KIND(DimSize);
  DimSizeNode(Value x, int axis, Loc loc)
      : Node(kKind, {std::move(x)}, {Type(DType::I64)}, loc), axis_(axis) {}
  int axis() const { return axis_; }

 private:
  int axis_;
};

class UnaryNode : public Node {
 public:
  SCANGEN_NODE_KIND(Unary);
  UnaryNode(UnaryOp op, Value x, Type type, Loc loc)
      : Node(kKind, {std::move(x)}, {std::move(type)}, loc), op_(op) {}
  UnaryOp op() const { return op_; }

 private:
  UnaryOp op_;
};

// Element-wise with NumPy broadcasting; both operands have the same dtype.
class BinaryNode : public Node {
 public:
  SCANGEN_NODE_KIND(Binary);
  BinaryNode(BinaryOp op, Value a, Value b, Type type, Loc loc)
      : Node(kKind, {std::move(a), std::move(b)}, {std::move(type)}, loc), op_(op) {}
  BinaryOp op() const { return op_; }

 private:
  BinaryOp op_;
};

// where(cond, a, b), element-wise with broadcasting.
class SelectNode : public Node {
 public:
  SCANGEN_NODE_KIND(Select);
  SelectNode(Value c, Value a, Value b, Type type, Loc loc)
      : Node(kKind, {std::move(c), std::move(a), std::move(b)}, {std::move(type)}, loc) {}
};

class CastNode : public Node {
 public:
  SCANGEN_NODE_KIND(Cast);
  CastNode(Value x, Type type, Loc loc) : Node(kKind, {std::move(x)}, {std::move(type)}, loc) {}
};

// A reduction over one axis, or over every element when axis is empty.
class ReduceNode : public Node {
 public:
  SCANGEN_NODE_KIND(Reduce);
  ReduceNode(ReduceOp op, Value x, std::optional<int> axis, Type type, Loc loc)
      : Node(kKind, {std::move(x)}, {std::move(type)}, loc), op_(op), axis_(axis) {}
  ReduceOp op() const { return op_; }
  const std::optional<int>& axis() const { return axis_; }

 private:
  ReduceOp op_;
  std::optional<int> axis_;
};

// a @ b for vectors and matrices.
class MatMulNode : public Node {
 public:
  SCANGEN_NODE_KIND(MatMul);
  MatMulNode(Value a, Value b, Type type, Loc loc)
      : Node(kKind, {std::move(a), std::move(b)}, {std::move(type)}, loc) {}
};

// One entry of an index list: a scalar index (removes the dimension) or a slice lo:hi (keeps it).
// Its operands follow in the node's inputs: one for a scalar, has_lo + has_hi for a slice.
struct IndexSpec {
  enum class Kind : uint8_t { Scalar, Slice } kind = Kind::Scalar;
  bool has_lo = false;
  bool has_hi = false;
  int num_operands() const { return kind == Kind::Scalar ? 1 : int(has_lo) + int(has_hi); }
  bool operator==(const IndexSpec& o) const {
    return kind == o.kind && has_lo == o.has_lo && has_hi == o.has_hi;
  }
};

// x[specs...] with Python semantics: negative indices count from the end, out-of-range scalar
// indices are run-time errors, slice bounds are clamped. Inputs: x, then the index operands.
class IndexNode : public Node {
 public:
  SCANGEN_NODE_KIND(Index);
  IndexNode(std::vector<Value> inputs, std::vector<IndexSpec> specs, Type type, Loc loc)
      : Node(kKind, std::move(inputs), {std::move(type)}, loc), specs_(std::move(specs)) {}
  const std::vector<IndexSpec>& specs() const { return specs_; }

 private:
  std::vector<IndexSpec> specs_;
};

// set(x[specs], v) or inc(x[specs], v): x with the region replaced by (or incremented by) v,
// broadcast to the region's shape. Inputs: x, v, then the index operands.
class UpdateNode : public Node {
 public:
  SCANGEN_NODE_KIND(Update);
  UpdateNode(std::vector<Value> inputs, std::vector<IndexSpec> specs, bool accumulate, Type type, Loc loc)
      : Node(kKind, std::move(inputs), {std::move(type)}, loc),
        specs_(std::move(specs)),
        accumulate_(accumulate) {}
  const std::vector<IndexSpec>& specs() const { return specs_; }
  bool accumulate() const { return accumulate_; }

 private:
  std::vector<IndexSpec> specs_;
  bool accumulate_;
};

// Passes x through after checking its run-time shape: each dimension is unchecked, equal to a
// constant, or equal to an i64 operand. Inputs: x, then the operands. `what` names the value in
// the error message ("argument 'x' of 'f'").
struct DimCheck {
  enum class Kind : uint8_t { None, Const, Operand } kind = Kind::None;
  int64_t value = 0;  // Const: the size; Operand: the input index (>= 1)
  std::string symbol;  // for messages: the declared name of the dimension, if any
  bool operator==(const DimCheck& o) const {
    return kind == o.kind && value == o.value && symbol == o.symbol;
  }
};

class CheckShapeNode : public Node {
 public:
  SCANGEN_NODE_KIND(CheckShape);
  CheckShapeNode(std::vector<Value> inputs, std::vector<DimCheck> checks, std::string what, Type type, Loc loc)
      : Node(kKind, std::move(inputs), {std::move(type)}, loc),
        checks_(std::move(checks)),
        what_(std::move(what)) {}
  const std::vector<DimCheck>& checks() const { return checks_; }
  const std::string& what() const { return what_; }

 private:
  std::vector<DimCheck> checks_;
  std::string what_;
};

// The elements of x in C order with another shape. Inputs: x, then one i64 per dimension. The
// rewrites create it (to treat a sequence of matrices as one matrix, or to insert dimensions of
// size 1) always with as many elements (`checked` false); the language's reshape(x, d0, ...) is
// `checked`: a negative size or another number of elements is a run-time error.
class ReshapeNode : public Node {
 public:
  SCANGEN_NODE_KIND(Reshape);
  ReshapeNode(std::vector<Value> inputs, bool checked, Type type, Loc loc)
      : Node(kKind, std::move(inputs), {std::move(type)}, loc), checked_(checked) {}
  bool checked() const { return checked_; }

 private:
  bool checked_;
};

// x with its axes permuted: result axis d is x's axis perm[d] (transpose(x) reverses them).
class TransposeNode : public Node {
 public:
  SCANGEN_NODE_KIND(Transpose);
  TransposeNode(Value x, std::vector<int> perm, Type type, Loc loc)
      : Node(kKind, {std::move(x)}, {std::move(type)}, loc), perm_(std::move(perm)) {}
  const std::vector<int>& perm() const { return perm_; }

 private:
  std::vector<int> perm_;
};

// x[idx] for an integer tensor idx (NumPy's take along axis 0): shape idx.shape + x.shape[1:],
// row idx[j...] of x at j...; negative indices count from the end, others out of range are
// run-time errors. Inputs: x, idx.
class GatherNode : public Node {
 public:
  SCANGEN_NODE_KIND(Gather);
  GatherNode(Value x, Value idx, Type type, Loc loc)
      : Node(kKind, {std::move(x), std::move(idx)}, {std::move(type)}, loc) {}
};

// x with row v[j...] added to row idx[j...] for every j... (rows taken twice get both: NumPy's
// add.at): the adjoint of a gather. Not in the language. Inputs: x, idx, v of shape
// idx.shape + x.shape[1:].
class ScatterAddNode : public Node {
 public:
  SCANGEN_NODE_KIND(ScatterAdd);
  ScatterAddNode(Value x, Value idx, Value v, Type type, Loc loc)
      : Node(kKind, {std::move(x), std::move(idx), std::move(v)}, {std::move(type)}, loc) {}
};

// argmax/argmin (op Max or Min): the i64 position of the first largest (smallest) element, NaN
// counting as the extreme (NumPy), of x flattened in C order or along one axis.
class ArgReduceNode : public Node {
 public:
  SCANGEN_NODE_KIND(ArgReduce);
  ArgReduceNode(ReduceOp op, Value x, std::optional<int> axis, Type type, Loc loc)
      : Node(kKind, {std::move(x)}, {std::move(type)}, loc), op_(op), axis_(axis) {}
  ReduceOp op() const { return op_; }
  const std::optional<int>& axis() const { return axis_; }

 private:
  ReduceOp op_;
  std::optional<int> axis_;
};

// The axis a reduction (Reduce or ArgReduce) removes; nullopt when it reduces every element.
inline const std::optional<int>& reduced_axis(const Node& n) {
  if (const auto* a = n.as<ArgReduceNode>()) return a->axis();
  return n.as<ReduceNode>()->axis();
}

// The i64 positions of the k largest elements along x's last axis, largest first, ties to the
// lower position, NaN above every number; k beyond the axis (or negative) is a run-time error.
// Inputs: x, k (i64 scalar). top_k's values are a gather of x at these positions.
class TopKNode : public Node {
 public:
  SCANGEN_NODE_KIND(TopK);
  TopKNode(Value x, Value k, Type type, Loc loc) : Node(kKind, {std::move(x), std::move(k)}, {std::move(type)}, loc) {}
};

// stop_gradient(x): x, through which no gradient flows. Only the frontend sees it: `grad` is
// expanded while a function is analyzed, and the markers are removed when its analysis ends
// (autodiff::strip_stop_gradients), so the rewrites and backends never meet one.
// The lengths of a scan with `lengths = L` (i64[B]) after checking that every L[b] lies in
// 0..steps (input 1, an i64 scalar); its value is L. The frontend puts it before the scan. The
// same check of reverse_sequence(x, L) bounds L by x's rows instead (another message).
enum class LengthsBound : uint8_t { ScanSteps, Rows };
class CheckLengthsNode : public Node {
 public:
  SCANGEN_NODE_KIND(CheckLengths);
  CheckLengthsNode(Value lengths, Value steps, LengthsBound bound, Loc loc)
      : Node(kKind, {lengths, std::move(steps)}, {lengths.type()}, loc), bound_(bound) {}
  LengthsBound bound() const { return bound_; }
  // The run-time error of a length out of range.
  RuntimeErrorId error() const;

 private:
  LengthsBound bound_;
};

// The offsets of a packed batch (`offsets = O`, i64[B + 1]) after checking that there is one,
// that they start at 0, never decrease and, with a second input (an i64 scalar), end at the
// packed sequences' rows; its value is O.
class CheckOffsetsNode : public Node {
 public:
  SCANGEN_NODE_KIND(CheckOffsets);
  CheckOffsetsNode(std::vector<Value> inputs, Loc loc) : Node(kKind, inputs, {inputs.at(0).type()}, loc) {}
};

class StopGradientNode : public Node {
 public:
  SCANGEN_NODE_KIND(StopGradient);
  StopGradientNode(Value x, Loc loc) : Node(kKind, {x}, {x.type()}, loc) {}
};

// ---- imported C++ functions (import "helpers.h")

// A function of an imported header (namespace scangen_export), as the program uses it.
struct ImportedFunction {
  std::string name;           // unqualified, as the .scan file calls it
  std::vector<DType> params;
  DType result = DType::F32;
  bool host_device = false;   // callable from CUDA kernels
  Loc loc;                    // of its name in the header (the header is a file of the SourceManager)
  // Per parameter: the index in Import::functions of its partial derivative f_d<i>, or -1.
  std::vector<int> partials;
};

// A function of an imported header that cannot be called, with why: each reason is located at
// the declaration it concerns. Calling one is an error at the call (frontend/sema_imports.cpp).
struct UnusableFunction {
  std::string name;
  std::vector<std::pair<Loc, std::string>> reasons;
};

// One imported header.
struct Import {
  std::filesystem::path header;          // absolute and normalized: what the JIT and the shim include
  std::string spelling;                  // as written in the import statement: what `compile` includes
  Loc loc;                               // of the import statement
  std::vector<std::filesystem::path> dependencies;  // the header first, then what it includes
  std::vector<ImportedFunction> functions;           // every usable function of the header
  std::vector<UnusableFunction> unusable;            // the others of namespace scangen_export
  std::string cuda_parse_problem;        // why the header cannot be used for CUDA (empty: it can)
};
using ImportRef = std::shared_ptr<const Import>;

// f(args...) of an imported function, element-wise with NumPy broadcasting. Each argument has the
// dtype of its parameter (the frontend converts them). Pure: rewrites treat it as an element-wise
// operation, but never evaluate it at compile time.
class CallNode : public Node {
 public:
  SCANGEN_NODE_KIND(Call);
  CallNode(ImportRef import, int function, std::vector<Value> args, Type type, Loc loc)
      : Node(kKind, std::move(args), {std::move(type)}, loc), import_(std::move(import)), function_(function) {}
  const ImportRef& import() const { return import_; }
  int function_index() const { return function_; }
  const ImportedFunction& function() const { return import_->functions.at(static_cast<size_t>(function_)); }

 private:
  ImportRef import_;
  int function_;
};

struct Graph;

// What a scan reads and produces, in Theano's terms.
struct ScanSequence {
  std::vector<int64_t> taps;  // sorted, unique: tap k reads U[t + k] in iteration terms
  std::string label;          // the expression as written, for messages ("arange(n)")
  // The taps as written, for messages: rewrites drop taps nothing reads (when that changes neither
  // m nor M), but an error must name the taps the user wrote. Empty: `taps`.
  std::vector<int64_t> written_taps;
  const std::vector<int64_t>& taps_in_messages() const { return written_taps.empty() ? taps : written_taps; }
  std::string taps_text() const;  // "-2, 0": taps_in_messages() as messages print them
  int64_t min_tap() const { return std::min<int64_t>(taps.front(), 0); }  // m
  int64_t max_tap() const { return std::max<int64_t>(taps.back(), 0); }   // M
  int64_t span() const { return max_tap() - min_tap(); }                 // steps lost: M - m
  // The row tap k reads at step 0, counted from the first row (forward: k - m) or from the last
  // (reverse: M - k); step t reads t rows further on. Two taps read the same rows at every step
  // exactly when their offsets are equal.
  int64_t row_offset(int64_t tap, bool reverse) const { return reverse ? max_tap() - tap : tap - min_tap(); }
};

struct ScanState {
  std::string name;
  std::vector<int64_t> lags;  // sorted, unique, >= 1: lag k reads X[t - k]
  // Set by the in-place rewrite: the init is computed directly into the state's storage instead of
  // into a buffer of its own that the loop would copy (nothing else reads it; it cannot fail).
  bool init_in_place = false;
  int64_t max_lag() const { return lags.empty() ? 0 : lags.back(); }
  // The init holds one row per step read when more than one step back is read.
  bool init_has_rows() const { return max_lag() > 1; }
};

// Rows the result buffers of a scan that stops on `until` hold before they first grow (by doubling),
// in the interpreter and in emitted code alike: a huge `steps` bound with an early `until` is cheap.
constexpr int64_t kInitialUntilRows = 1024;

struct ScanInfo {
  bool has_steps = false;
  bool reverse = false;
  bool has_until = false;
  int64_t truncate_gradient = -1;
  // checkpoint = N (0: none): the backward pass of a gradient keeps the states of every N-th step
  // and recomputes the others (autodiff/scan_adjoint.cpp).
  int64_t checkpoint = 0;
  // `scan(parallel)`: the user allows any association order (language.md); the rewrite
  // parallel-scan may then reassociate float recurrences.
  bool parallel = false;
  // Set by the rewrite parallel-scan (passes/parallel_scan.cpp): the scan's one state is computed
  // by this associative operator from its previous value and the step's operands (ir/assoc.h), so
  // that a backend may evaluate it in any association order (a chunked prefix scan).
  std::optional<AssocOp> assoc;
  std::string index_name = "t";
  std::vector<ScanSequence> sequences;
  std::vector<ScanState> states;
  std::vector<std::string> outputs;  // per-step outputs (not fed back)
  int num_params = 0;
  // Outputs of which only the last rows are kept (save-mem): output name -> number of rows. The
  // output then holds min(steps taken, window) rows, the last ones in iteration order.
  std::map<std::string, int64_t> windows;

  // Node inputs: [steps] sequences... inits... params...
  int steps_input() const { return 0; }
  int sequence_input(int i) const { return int(has_steps) + i; }
  int init_input(int i) const { return sequence_input(int(sequences.size())) + i; }
  int param_input(int i) const { return init_input(int(states.size())) + i; }
  int num_inputs() const { return param_input(num_params); }

  // Body params: [t] (sequence i, tap j)... (state i, lag j)... params...
  int body_index_param() const { return 0; }
  int body_sequence_param(int seq, int tap) const;
  int body_state_param(int state, int lag) const;
  int body_param(int i) const;
  int num_body_params() const { return body_param(num_params); }

  // Body results and node outputs: states..., outputs... (the body also yields the until flag last)
  int num_outputs() const { return int(states.size() + outputs.size()); }
  int num_body_results() const { return num_outputs() + int(has_until); }
  const std::string& output_name(int i) const {
    return i < int(states.size()) ? states[size_t(i)].name : outputs[size_t(i) - states.size()];
  }
  // Rows output i keeps: 0 for all of them.
  int64_t window(int i) const {
    auto it = windows.find(output_name(i));
    return it == windows.end() ? 0 : it->second;
  }

  bool operator==(const ScanInfo& o) const;
  // The options after `scan` as the printers show them, each with a leading space: " reverse until
  // truncate_gradient=N checkpoint=N parallel assoc=affine" (steps and sequences excluded).
  std::string flags_text() const;
};

class ScanNode : public Node {
 public:
  SCANGEN_NODE_KIND(Scan);
  ScanNode(std::vector<Value> inputs, ScanInfo info, std::shared_ptr<const Graph> body,
           std::vector<Type> outputs, Loc loc)
      : Node(kKind, std::move(inputs), std::move(outputs), loc),
        info_(std::move(info)),
        body_(std::move(body)) {}
  const ScanInfo& info() const { return info_; }
  const Graph& body() const { return *body_; }
  const std::shared_ptr<const Graph>& body_ptr() const { return body_; }

 private:
  ScanInfo info_;
  std::shared_ptr<const Graph> body_;
};

#undef SCANGEN_NODE_KIND

// ---- graphs, functions, programs

struct Graph {
  std::vector<Value> params;   // ParamNode outputs, params[i] has index i
  std::vector<Value> results;
};

struct ArgDecl {
  std::string name;
  Type type;  // declared: dims are constants, signature symbols or unknown
  Loc loc;
};

struct ResultDecl {
  std::string name;  // declared name, or empty
  Type type;
  Loc loc;
};

struct Function {
  std::string name;
  Loc loc;
  std::vector<ArgDecl> args;
  std::vector<ResultDecl> results;
  bool tuple_result = false;
  Graph graph;

  // The name under which result i is known: its declared name, else "out<i>".
  std::string result_name(size_t i) const;
  // "(A: f32[n], k: i32) -> f32[n]"
  std::string signature() const;
};

struct Program {
  std::string source_path;  // the .scan file as named on the command line
  std::vector<Function> functions;
  std::vector<ImportRef> imports;  // in the order of the import statements
  const Function* find(const std::string& name) const;
};

// The imported functions the program calls (scan bodies included), per import in the order of
// Program::imports: (import index, function index), sorted.
std::vector<std::pair<int, int>> used_imported_functions(const Program& p);
// The imports whose functions code generated for `p` may call: Program::imports, then any other
// import a call node refers to (a program assembled from functions of several files, in tests).
std::vector<ImportRef> imports_to_include(const Program& p);

// Nodes reachable from the graph's results, inputs before users, in a deterministic order (a
// depth-first walk from the results in order). Scan bodies are not entered.
std::vector<const Node*> topological_order(const Graph& g);

}  // namespace scangen::ir
