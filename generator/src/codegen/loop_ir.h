// The loop-level IR (LIR): what the shared lowering produces and what each backend prints.
//
// A function body is a tree of statements over scalar variables, pointers into buffers, loops,
// loads and stores; every shape is a run-time value computed in the code. Backends differ only in
// how they print this tree (and, for CUDA, how they map loops to threads).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "scangen/fp_mode.h"

namespace scangen::lir {

using ir::BinaryOp;
using ir::UnaryOp;

// The type of a variable: a scalar of an element type, or a pointer to elements.
struct VarType {
  enum class Kind : uint8_t { Scalar, Pointer, ConstPointer } kind = Kind::Scalar;
  DType elem = DType::I64;
  static VarType scalar(DType d) { return {Kind::Scalar, d}; }
  static VarType pointer(DType d) { return {Kind::Pointer, d}; }
  static VarType const_pointer(DType d) { return {Kind::ConstPointer, d}; }
  bool is_pointer() const { return kind != Kind::Scalar; }
};

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t {
  Imm,     // a constant of `type`
  Var,     // a variable (scalar or pointer)
  Load,    // ptr[index]
  Unary,   // element operation (scalar semantics of templates/common/scangen_scalar.h)
  Binary,  // element operation, or (index = true) plain index arithmetic on i64
  Select,  // c ? a : b
  Cast,    // element conversion to `type`
  Call,    // a pure function of an imported C++ header: name(args...), `name` qualified
};

struct Expr {
  ExprKind kind;
  DType type;       // the element type of the value (for a pointer Var: its element type)
  ir::Scalar imm;   // Imm
  std::string name; // Var, and the pointer of a Load
  bool pointer = false;  // Var of pointer type
  ExprRef a, b, c;  // operands (Load: a = index)
  std::vector<ExprRef> args;  // Call: the arguments
  UnaryOp uop = UnaryOp::Neg;
  BinaryOp bop = BinaryOp::Add;
  bool index_math = false;  // Binary: i64 index arithmetic printed with plain operators
};

// ---- expression factories
ExprRef imm(ir::Scalar s);
ExprRef i64(int64_t v);
ExprRef var(const std::string& name, DType type);
ExprRef ptr_var(const std::string& name, DType elem);
ExprRef load(const ExprRef& ptr, ExprRef index);
ExprRef unary(UnaryOp op, ExprRef a);
ExprRef binary(BinaryOp op, ExprRef a, ExprRef b);
ExprRef select(ExprRef c, ExprRef a, ExprRef b);
ExprRef cast(DType to, ExprRef a);
// `callee` (a qualified C++ name) applied to scalar arguments, giving `result`.
ExprRef call(const std::string& callee, DType result, std::vector<ExprRef> args);
// Index arithmetic on i64 (folds constants: 0 + x is x, 1 * x is x).
ExprRef add(ExprRef a, ExprRef b);
ExprRef sub(ExprRef a, ExprRef b);
ExprRef mul(ExprRef a, ExprRef b);
// a / b of non-negative indices (folds constants, x / 1 is x).
ExprRef quotient(ExprRef a, ExprRef b);
ExprRef lt(ExprRef a, ExprRef b);
ExprRef ge(ExprRef a, ExprRef b);
ExprRef eq(ExprRef a, ExprRef b);
ExprRef logical_or(ExprRef a, ExprRef b);
ExprRef logical_and(ExprRef a, ExprRef b);
ExprRef min(ExprRef a, ExprRef b);
ExprRef max(ExprRef a, ExprRef b);
std::optional<int64_t> const_int(const ExprRef& e);
bool same_expr(const ExprRef& a, const ExprRef& b);
// A hash consistent with same_expr.
size_t hash_expr(const ExprRef& e);

// ---- statements

struct Stmt;
using StmtRef = std::shared_ptr<Stmt>;

enum class StmtKind : uint8_t {
  Block,    // body
  Let,      // const var = value  (scalar or pointer)
  Decl,     // mutable var = value
  Assign,   // var = value
  Store,    // ptr[index] = value
  For,      // for (int64_t var = begin; var < end; ++var) body
  If,       // if (cond) body else else_body
  Break,    // leave the innermost time loop
  Check,    // if (!cond) raise the user error `message` at (line, col)
  Alloc,    // var = storage `storage` holding at least `value` elements (keeps capacity); with `cond`
            // (a lent result), the caller's memory args[0] (room for args[1] elements) when `cond`
            // holds at run time instead
  Grow,     // var = storage `storage` grown to `value` elements, keeping the first `index`
  Call,     // a helper of the prologue: callee(args...)
  Result,   // result #index of the function: data `value`, dims `args`, owned by `storage` if set
  Comment,
  Barrier,  // CUDA only: every thread of the launch waits for all others (cuda_barriers.h); then,
            // with `failure_check`, every thread returns if any failed since the previous barrier
};

enum class LoopKind : uint8_t {
  Serial,
  Vector,  // an innermost loop over contiguous elements with no carried dependence
  Time,    // the step loop of a scan (var is named step...)
  // Made only by the CPU pass `threads` (cpu_threads.h): [begin, end) is split into contiguous
  // chunks spread over the thread pool; the body runs once per chunk, with `var` bound to the
  // chunk's first iteration and `chunk_end` to one past its last (on one thread: [begin, end)).
  Parallel,
};

// A piece of an error message: text, or the decimal value of an i64 expression.
struct MessagePart {
  std::string text;
  ExprRef value;
};

struct Stmt {
  StmtKind kind;
  std::vector<StmtRef> body;
  std::vector<StmtRef> else_body;
  std::string var;
  VarType vtype;
  ExprRef value;
  ExprRef index;
  ExprRef begin, end;
  LoopKind loop = LoopKind::Serial;
  ExprRef cond;
  int line = 0, col = 0;
  std::vector<MessagePart> message;
  std::string callee;
  std::vector<ExprRef> args;
  std::string storage;
  int result_index = 0;
  bool mutable_pointer = false;  // Alloc: the pointer may be reassigned by a Grow
  bool failure_check = false;    // Barrier: followed by the check whether a thread failed
  // For, fast mode only (reassociate-reductions): the loop only combines values into this float
  // variable with reduction_op (add or mul), which may happen in any order (partial sums).
  std::string reduction_var;
  BinaryOp reduction_op = BinaryOp::Add;
  std::string text;
  // For of kind Parallel: the variable bound to the end of the chunk, the fewest iterations
  // worth a thread (an i64 expression), chunk boundaries this many iterations apart, and the
  // threads asked for.
  std::string chunk_end;
  ExprRef grain;
  int64_t alignment = 1;
  int threads = 1;
};

// ---- statement factories (one per kind; what each field means is above)
StmtRef block(std::vector<StmtRef> body = {});
// const var = value (a scalar)
StmtRef let_stmt(std::string var, ExprRef value);
// const var = base + offset (a pointer into the buffer `base` points into)
StmtRef let_pointer_stmt(std::string var, const ExprRef& base, ExprRef offset, bool writable);
StmtRef decl_stmt(std::string var, ExprRef init);
StmtRef assign_stmt(std::string var, ExprRef value);
StmtRef store_stmt(std::string pointer, ExprRef index, ExprRef value);
StmtRef for_stmt(std::string var, ExprRef begin, ExprRef end, LoopKind kind, std::vector<StmtRef> body = {});
// A loop of kind Parallel over [begin, end): its body runs once per chunk [var, chunk_end).
StmtRef parallel_stmt(std::string var, std::string chunk_end, ExprRef begin, ExprRef end, ExprRef grain,
                      int64_t alignment, int threads, std::vector<StmtRef> body = {});
StmtRef if_stmt(ExprRef cond, std::vector<StmtRef> then_body = {});
StmtRef break_stmt();
StmtRef check_stmt(ExprRef cond, int line, int col, std::vector<MessagePart> message);
// var = `count` elements of `storage`; a failure to allocate is the user error `failure` at (line, col)
StmtRef alloc_stmt(std::string var, DType elem, std::string storage, ExprRef count, bool growable, int line, int col,
                   std::vector<MessagePart> failure);
// Makes an allocation lend the caller's memory `out` (room for `capacity` elements) when `into`
// holds at run time: a result written where the caller asked (lend_result in the lowering).
void lend_caller_memory(Stmt& alloc, ExprRef into, ExprRef out, ExprRef capacity);
StmtRef grow_stmt(std::string var, std::string storage, ExprRef count, ExprRef keep, int line, int col,
                  std::vector<MessagePart> failure);
StmtRef call_stmt(std::string callee, std::vector<ExprRef> args);
StmtRef result_stmt(int index, ExprRef data, std::vector<ExprRef> dims, std::string storage);
StmtRef comment_stmt(std::string text);
StmtRef barrier(bool failure_check = false);
// A copy of a statement tree that shares no statement with it (expressions are immutable).
StmtRef clone(const Stmt& s);

// A buffer owned by the function: storage that keeps its capacity across uses.
struct StorageDecl {
  std::string name;
  DType elem;
};

struct Param {
  std::string name;      // the pointer (tensor) or the value (scalar)
  DType dtype;
  int rank = 0;
  std::vector<std::string> dims;  // names of its dimension variables
};

// factor * the product of argument dimensions (argument index, axis): a parallel width.
struct WidthTerm {
  int64_t factor = 1;
  std::vector<std::pair<int, int>> dims;
};

// What the CUDA passes of the loop IR decided for a function's kernel (lir_passes.def). The CUDA
// printer prints these decisions; it makes none.
struct KernelPlan {
  int flattened = 0;  // element nests made one element loop (flatten-element-nests)
  int lanes = 0;      // time loops turned into independent lanes (lanes)
  bool full_occupancy = false;         // __launch_bounds__ for every thread an SM holds (launch-bounds)
  std::set<std::string> block_shared;  // storages in the block's shared memory on a one-block launch (block-shared)
  std::vector<WidthTerm> width;        // how many threads a launch is worth: the largest term (parallel-width)
};

// An argument or a result as the .scan function declares it.
struct Declared {
  std::string name;       // the parameter's name; a result's declared name, or empty
  DType dtype = DType::F32;
  int rank = 0;
  std::string type_text;  // as declared: "f32[n, 2]"
  Loc loc;
};

// What the printers need of a .scan function's declaration, copied by the lowering so that a
// printer never reads the program IR.
struct Signature {
  std::string text;  // "(A: f32[n], k: i32) -> f32[n]"
  std::vector<Declared> args;
  std::vector<Declared> results;
  // A result's declared name, or out<i>.
  std::string result_name(size_t i) const;
};

// A C++ header the program imports, as emitted code includes it.
struct Include {
  std::filesystem::path header;  // absolute and normalized: what the JIT includes
  std::string spelling;          // as the import statement writes it: what `compile` includes
  std::vector<std::filesystem::path> dependencies;  // the header, then what it includes
};

struct Function {
  std::string name;        // the .scan fn
  Signature signature;
  std::string symbol;      // the C++ name of the implementation
  std::vector<Param> params;
  std::vector<Param> results;
  // The form that writes the results into the caller's memory, for a function whose result shapes
  // follow from its argument shapes (empty otherwise): `into`, a bool parameter that selects it
  // at run time, and per result the caller's tensor (a pointer and its dims; for a scalar result
  // an unnamed entry: the typed API stores the returned value).
  std::string into;
  std::vector<Param> outs;
  std::vector<StorageDecl> storages;
  StmtRef body;
  KernelPlan kernel;
  // The threads the CPU code is compiled for (--threads; 0: every hardware thread), which the
  // CPU pass `threads` spreads loops over. 1: no parallel loop.
  int threads = 1;
};

struct Module {
  std::string source_path;  // the .scan file as named on the command line
  std::vector<Include> imports;  // the headers emitted code includes, in the program's order
  // Fast: the passes of lir_passes.def's fast stage ran; the CPU printer adds their support code.
  FpMode fp_mode = FpMode::Strict;
  std::vector<Function> functions;
};

// How a result is named in messages: "result 0 ('h') of 'f'", "result 1 of 'f'".
std::string result_what(const Function& f, size_t i);

// ---- text (loop_ir_printer.cpp): what `scangen ir --lir` prints
std::string print_function(const Function& f);
std::string print_module(const Module& m);

// ---- LIR passes (loop_ir.cpp; the pipeline: codegen/lir_passes.def)

// Moves pure scalar lets and allocations whose operands do not change in a loop out of it.
void hoist_invariants(Function& f);
// Removes lets and declarations nothing reads, to a fixpoint (emitted code has no unused
// variables).
void remove_unused(Function& f);
// Names of every variable an expression or a statement tree reads.
void collect_reads(const ExprRef& e, std::vector<std::string>& out);
// Whether an expression loads from memory.
bool has_load(const ExprRef& e);
// Every load of an expression: (pointer name, index).
void collect_loads(const ExprRef& e, std::vector<std::pair<std::string, ExprRef>>& out);
// The pointer lets of a statement tree (a pointer derived from another: value + index), by name.
std::map<std::string, const Stmt*> pointer_lets(const Stmt& s);
// The pointer a pointer let derives from: its value, or for a choice between two pointers (a
// state's row `t - k` or, in the first steps, its init row: ScanLowering::bind_states) the first,
// the rows the loop writes (the other is only read).
const Expr& pointer_base(const Stmt& let);
// The buffer (an allocation or a parameter) `pointer` points into, through `lets`.
std::string pointer_root(const std::map<std::string, const Stmt*>& lets, const std::string& pointer);
// Whether a statement of this kind binds its `var` (a let, declaration, assignment, loop variable or
// allocation): the one list the analyses that count definitions share.
bool defines_var(StmtKind kind);

}  // namespace scangen::lir
