// Printing the loop IR as C++: what the CPU and CUDA backends share. Expressions print the same
// for both (the element semantics of templates/common/scangen_scalar.h); a backend overrides how
// the statements that touch memory, loops and failures print.
#pragma once

#include <set>
#include <sstream>
#include <string>

#include "codegen/loop_ir.h"

namespace scangen::codegen {

const char* ctype(DType d);        // float, int64_t, ...
const char* abi_dtype(DType d);    // SCANGEN_DTYPE_F32, ...
std::string quote(const std::string& s);  // a C++ string literal

class CppPrinter {
 public:
  virtual ~CppPrinter() = default;

  // `plain`: an integer in index arithmetic (printed bare); else typed for scalar_v1 templates.
  std::string expr(const lir::ExprRef& e, bool plain = false);
  // Prints `s` and what it holds at `indent`.
  void stmt(const lir::Stmt& s, int indent, std::ostringstream& os);

 protected:
  // NaN and infinities of `d` (float or double).
  virtual std::string special_float(double v, DType d) const;
  // The qualifier of pointers the lowering declares (lir: never two overlapping in one loop).
  virtual const char* restrict_qualifier() const { return "__restrict"; }
  // The statements a backend prints its own way; the defaults are the CPU's.
  virtual void print_for(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_store(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_check(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_alloc(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_grow(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_call(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_result(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_if(const lir::Stmt& s, int indent, std::ostringstream& os);

  // The arguments of a failure: line, column and the message's parts.
  std::string failure_arguments(const lir::Stmt& s);
  // An expression printed where no parentheses are needed around it.
  std::string top(const lir::ExprRef& e, bool plain = false);
  std::string paren(const lir::ExprRef& e);
  void body(const std::vector<lir::StmtRef>& stmts, int indent, std::ostringstream& os);

 private:
  std::string binary(const lir::Expr& e);
};

// Names a function body reads, to leave unused parameters unnamed (no -Wunused-parameter).
void reads_of(const lir::Stmt& s, std::set<std::string>& out);

}  // namespace scangen::codegen
