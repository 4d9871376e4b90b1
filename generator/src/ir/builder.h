// The only way to create IR nodes. Each factory computes the result type and checks that its
// operands are well typed; a violation is a scangen bug (the frontend reports user errors before
// it calls a factory), so it throws InternalError.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace scangen::ir {

class Builder {
 public:
  // Called with every node a factory creates (the frontend uses it to know where a node was made).
  using Observer = std::function<void(const Node&)>;

  Builder() = default;
  explicit Builder(Observer observer) : observer_(std::move(observer)) {}

  Value param(Type type, int index, std::string name, Loc loc);
  Value constant(Scalar value, Loc loc = {});
  Value int_constant(int64_t v, Loc loc = {}) { return constant(Scalar::of_int(DType::I64, v), loc); }
  // arange(start, stop); `length` is the static size of the result when the caller knows it.
  Value arange(Value start, Value stop, std::optional<Dim> length, Loc loc);
  // A tensor filled with `value`; dims are i64 scalars; static_dims their static sizes.
  Value fill(Value value, std::vector<Value> dims, std::vector<Dim> static_dims, Loc loc);
  Value dim_size(Value x, int axis, Loc loc);
  Value unary(UnaryOp op, Value x, Loc loc);
  Value binary(BinaryOp op, Value a, Value b, Loc loc);
  Value select(Value cond, Value a, Value b, Loc loc);
  // f(args...) of imported function `function` of `import`; each argument of its parameter's dtype.
  Value call(ImportRef import, int function, std::vector<Value> args, Loc loc);
  Value cast(Value x, DType to, Loc loc);
  Value reduce(ReduceOp op, Value x, std::optional<int> axis, Loc loc);
  Value matmul(Value a, Value b, Loc loc);
  Value index(Value x, std::vector<IndexSpec> specs, std::vector<Value> operands, Loc loc);
  Value update(Value x, Value v, std::vector<IndexSpec> specs, std::vector<Value> operands,
               bool accumulate, Loc loc);
  // Checks x's run-time shape; the result has x's dtype and `static_shape`.
  Value check_shape(Value x, std::vector<DimCheck> checks, std::vector<Value> operands,
                    std::string what, std::vector<Dim> static_shape, Loc loc);
  // x with the shape `dims` (i64 scalars; static sizes `static_dims`): of as many elements, or
  // `checked` at run time (the language's reshape).
  Value reshape(Value x, std::vector<Value> dims, std::vector<Dim> static_dims, Loc loc, bool checked = false);
  // x with axis d of the result taken from x's axis perm[d].
  Value transpose(Value x, std::vector<int> perm, Loc loc);
  // x[idx] for an integer tensor idx.
  Value gather(Value x, Value idx, Loc loc);
  // x with the rows of v added at idx (the adjoint of gather).
  Value scatter_add(Value x, Value idx, Value v, Loc loc);
  // argmax (op Max) or argmin (op Min) of x, flattened or along `axis`.
  Value arg_reduce(ReduceOp op, Value x, std::optional<int> axis, Loc loc);
  // The positions of the k largest along the last axis; `k_dim` the static size of k, if known.
  Value top_k(Value x, Value k, Dim k_dim, Loc loc);
  // lengths (i64[B]) after checking each lies in 0..steps (see CheckLengthsNode).
  Value check_lengths(Value lengths, Value steps, Loc loc, LengthsBound bound = LengthsBound::ScanSteps);
  // offsets (i64[B + 1]) after checking they start at 0, never decrease and end at `rows`.
  Value check_offsets(Value offsets, std::optional<Value> rows, Loc loc);
  // stop_gradient(x): the frontend's marker (see StopGradientNode).
  Value stop_gradient(Value x, Loc loc);
  // Creates a scan node; `steps` is the static number of steps. Returns its outputs.
  std::vector<Value> scan(std::vector<Value> inputs, ScanInfo info, std::shared_ptr<const Graph> body,
                          Dim steps, Loc loc);

  // The same operation as `old` on new inputs. Output types are kept when the inputs' types are
  // unchanged (so unknown dimensions keep their identity), recomputed otherwise.
  NodeRef rebuild(const Node& old, std::vector<Value> inputs);
  // rebuild() for a scan whose body changed too.
  NodeRef rebuild_scan(const ScanNode& old, std::vector<Value> inputs, ScanInfo info,
                       std::shared_ptr<const Graph> body, std::optional<Dim> steps = std::nullopt);

 private:
  template <class T, class... Args> NodeRef make(Args&&... args);

  Observer observer_;
};

// `count` rows `before` (or one row to broadcast, or a scalar), then the rows of `rows`: the
// history of a state, its init rows first ([count + n, row...]).
Value rows_after(Builder& b, const Value& before, int64_t count, const Value& rows, Loc loc);

// The rows of x in reverse order (a reverse scan that copies them).
Value flip_rows(Builder& b, const Value& x, Loc loc);

// The static shape of x[specs] (operands: the index operands, used when they are constants).
std::vector<Dim> index_result_shape(const Type& x, const std::vector<IndexSpec>& specs,
                                    const std::vector<Value>& operands);
// The static shape of a @ b, or nullopt when the ranks or inner dimensions do not fit.
std::optional<std::vector<Dim>> matmul_result_shape(const Type& a, const Type& b);
// The constant value of v, if it is a ConstantNode.
std::optional<Scalar> constant_value(const Value& v);

}  // namespace scangen::ir
