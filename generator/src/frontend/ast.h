// The syntax tree of a .scan file, as written. Semantic analysis (sema.cpp) reads it and builds IR;
// nothing here knows about types beyond the declared ones.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scangen/runtime/dtype.h"
#include "support/source.h"

namespace scangen::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind { IntLit, FloatLit, BoolLit, Name, DTypeName, Unary, Binary, Ternary, Call, Index, Scan, Tuple };

enum class UnaryOp { Neg, Plus, Not };
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Pow, MatMul, Eq, Ne, Lt, Le, Gt, Ge, And, Or };

const char* unary_op_spelling(UnaryOp op);
const char* binary_op_spelling(BinaryOp op);

struct Expr {
  ExprKind kind;
  Loc loc;  // the whole expression's first token (length covers it when it fits on a line)
  explicit Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};

struct IntLit : Expr {
  int64_t value;
  std::string text;
  IntLit(Loc l, int64_t v, std::string t) : Expr(ExprKind::IntLit, l), value(v), text(std::move(t)) {}
};

struct FloatLit : Expr {
  double value;
  std::string text;
  FloatLit(Loc l, double v, std::string t)
      : Expr(ExprKind::FloatLit, l), value(v), text(std::move(t)) {}
};

struct BoolLit : Expr {
  bool value;
  BoolLit(Loc l, bool v) : Expr(ExprKind::BoolLit, l), value(v) {}
};

struct Name : Expr {
  std::string name;
  Name(Loc l, std::string n) : Expr(ExprKind::Name, l), name(std::move(n)) {}
};

// A dtype keyword used where a value is expected: zeros(f32, n).
struct DTypeName : Expr {
  DType dtype;
  DTypeName(Loc l, DType d) : Expr(ExprKind::DTypeName, l), dtype(d) {}
};

struct Unary : Expr {
  UnaryOp op;
  ExprPtr operand;
  Unary(Loc l, UnaryOp o, ExprPtr e) : Expr(ExprKind::Unary, l), op(o), operand(std::move(e)) {}
};

struct Binary : Expr {
  BinaryOp op;
  Loc op_loc;
  ExprPtr lhs, rhs;
  Binary(Loc l, BinaryOp o, Loc ol, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), op_loc(ol), lhs(std::move(a)), rhs(std::move(b)) {}
};

struct Ternary : Expr {
  ExprPtr cond, then_expr, else_expr;
  Ternary(Loc l, ExprPtr c, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Ternary, l), cond(std::move(c)), then_expr(std::move(a)), else_expr(std::move(b)) {}
};

struct KeywordArg {
  std::string name;
  Loc loc;
  ExprPtr value;
};

// callee(args..., name = value...). The callee is a name or a dtype (a cast: f32(x)).
struct Call : Expr {
  std::string callee;
  Loc callee_loc;
  std::optional<DType> cast_to;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
  Call(Loc l, std::string c, Loc cl) : Expr(ExprKind::Call, l), callee(std::move(c)), callee_loc(cl) {}
};

// One entry of an index list: an expression, or a slice lo:hi with either bound optional.
struct IndexItem {
  Loc loc;
  bool is_slice = false;
  ExprPtr index;     // when !is_slice
  ExprPtr lo, hi;    // when is_slice (may be null)
};

struct Index : Expr {
  ExprPtr base;
  std::vector<IndexItem> items;
  Index(Loc l, ExprPtr b) : Expr(ExprKind::Index, l), base(std::move(b)) {}
};

struct ScanOption {
  std::string name;
  Loc loc;
  ExprPtr value;  // null for a flag such as `reverse`
};

struct Scan : Expr {
  std::vector<ScanOption> options;
  std::vector<StmtPtr> body;
  Loc close_loc;
  explicit Scan(Loc l) : Expr(ExprKind::Scan, l) {}
};

// (a, b): only meaningful as grad's second argument; elsewhere an error.
struct Tuple : Expr {
  std::vector<ExprPtr> elements;
  explicit Tuple(Loc l) : Expr(ExprKind::Tuple, l) {}
};

// ---- statements

enum class StmtKind { Let, Return, Init, StepDef, Until };

struct NameDecl {
  std::string name;
  Loc loc;
};

struct Stmt {
  StmtKind kind;
  Loc loc;
  Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
};

// let x = e   |   let (a, b) = e
struct Let : Stmt {
  std::vector<NameDecl> names;
  bool tuple = false;
  ExprPtr value;
  explicit Let(Loc l) : Stmt(StmtKind::Let, l) {}
};

// return e   |   return (a, b)
struct Return : Stmt {
  std::vector<ExprPtr> values;
  bool tuple = false;
  explicit Return(Loc l) : Stmt(StmtKind::Return, l) {}
};

// init x = e   (scan bodies only)
struct Init : Stmt {
  NameDecl name;
  ExprPtr value;
  explicit Init(Loc l) : Stmt(StmtKind::Init, l) {}
};

// x[t] = e   (scan bodies only)
struct StepDef : Stmt {
  NameDecl target;
  ExprPtr step;  // the expression inside the brackets; must be the loop index
  ExprPtr value;
  explicit StepDef(Loc l) : Stmt(StmtKind::StepDef, l) {}
};

// until c   (scan bodies only)
struct Until : Stmt {
  ExprPtr cond;
  explicit Until(Loc l) : Stmt(StmtKind::Until, l) {}
};

// ---- declarations

struct DimDecl {
  enum Kind { Constant, Symbol, Unknown } kind = Unknown;
  int64_t value = 0;
  std::string symbol;
  Loc loc;
};

struct TypeDecl {
  DType dtype = DType::F32;
  std::vector<DimDecl> dims;
  Loc loc;
};

struct ParamDecl {
  std::string name;
  Loc loc;
  TypeDecl type;
};

struct ResultDecl {
  std::string name;  // empty when unnamed
  Loc loc;
  TypeDecl type;
};

struct FnDecl {
  std::string name;
  Loc loc;
  Loc name_loc;
  std::vector<ParamDecl> params;
  std::vector<ResultDecl> results;
  bool tuple_result = false;
  std::vector<StmtPtr> body;
  Loc close_loc;
};

// import "helpers.h"
struct ImportDecl {
  std::string path;  // as written between the quotes
  Loc loc;           // the whole statement
  Loc path_loc;      // the string
};

struct Module {
  int file_id = -1;
  std::vector<ImportDecl> imports;
  std::vector<std::unique_ptr<FnDecl>> functions;
};

// Source-like text of an expression (for messages and sequence labels), e.g. "arange(n)".
std::string to_source(const Expr& e);

template <class T> const T& as(const Expr& e) { return static_cast<const T&>(e); }
template <class T> const T& as(const Stmt& s) { return static_cast<const T&>(s); }

}  // namespace scangen::ast
