// Printing the loop IR as C++: what the CPU and CUDA backends share. Expressions print the same
// for both (the element semantics of templates/common/scangen_scalar.h); a backend overrides how
// the statements that touch memory, loops and failures print.
#pragma once

#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "codegen/loop_ir.h"
#include "support/cxx_text.h"

namespace scangen::codegen {

const char* abi_dtype(DType d);    // SCANGEN_DTYPE_F32, ...

class CppPrinter {
 public:
  virtual ~CppPrinter() = default;

  // `plain`: an integer in index arithmetic (printed bare); else typed for scalar_v1 templates.
  std::string expr(const lir::ExprRef& e, bool plain = false);
  // Prints `s` and what it holds at `indent`.
  void stmt(const lir::Stmt& s, int indent, std::ostringstream& os);

 protected:
  // Called before any statement is printed, at its indentation.
  virtual void before_statement(const lir::Stmt&, int /*indent*/, std::ostringstream& /*os*/) {}
  // NaN and infinities of `d` (float or double).
  virtual std::string special_float(double v, DType d) const;
  // The qualifier of pointers the lowering declares (lir: never two overlapping in one loop).
  virtual const char* restrict_qualifier() const { return "__restrict"; }
  // A load of `pointer[index]` (index printed plain).
  virtual std::string load(const std::string& pointer, const std::string& index) { return pointer + "[" + index + "]"; }
  // The statements a backend prints its own way; the defaults are the CPU's.
  virtual void print_for(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_store(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_check(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_alloc(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_grow(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_call(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_result(const lir::Stmt& s, int indent, std::ostringstream& os);
  virtual void print_if(const lir::Stmt& s, int indent, std::ostringstream& os);
  // Barriers are CUDA's (cuda_barriers.h): the CPU backend never gets one.
  virtual void print_barrier(const lir::Stmt& s, int indent, std::ostringstream& os);

  // The arguments of a failure: line, column and the message's parts.
  std::string failure_arguments(const lir::Stmt& s);
  // An expression printed where no parentheses are needed around it.
  std::string top(const lir::ExprRef& e, bool plain = false);
  std::string paren(const lir::ExprRef& e);
  void body(const std::vector<lir::StmtRef>& stmts, int indent, std::ostringstream& os);

 private:
  std::string binary(const lir::Expr& e);
};

// The typed C++ API of one function.
struct Api {
  std::string name;           // C++ function name
  std::string result_type;    // scangen::Tensor<float>, float, or a struct name
  std::string result_struct;  // the struct definition, for several results
  std::vector<std::string> result_fields;
  std::string params;         // "scangen::TensorRef<const float> A, int32_t k"
  std::vector<std::string> arg_names;  // the C++ names of the parameters
  std::string local;          // the C++ name of the API body's result variable
  // The form that writes the results into the caller's memory (a function whose lir::Function has
  // `into`): its trailing parameters ("scangen::TensorRef<float> out", after `params`) and their
  // names.
  std::string out_params;
  std::vector<std::string> out_names;
};

// How a backend's API spells tensors: an argument or a result's memory (a view), a result (owned).
struct ApiTypes {
  std::function<std::string(DType, bool is_const)> tensor_ref;
  std::function<std::string(DType)> tensor;
};

// The typed API of every function. Names are chosen for the whole module: the functions and
// result structs share the namespace with the implementations, and a parameter must not hide
// a type, the implementation or the result variable that the API body names.
std::vector<Api> apis_of(const lir::Module& module, const ApiTypes& types);

// The first line of every emitted file: scangen's version and the .scan file.
std::string generated_banner(const lir::Module& module);
// The include guard of the header `<stem>.<extension>`.
std::string include_guard(const std::string& stem, const std::string& extension);
// The parameters of a function's implementation for its arguments, one entry per argument
// ("const float* A, int64_t A_d0", "int32_t k"); names the body does not read are commented out
// (no -Wunused-parameter).
std::vector<std::string> impl_parameters(const lir::Function& f);
// The parameters of the form with results in the caller's memory, after the results': the flag
// that selects it ("bool into") and each tensor result's memory ("float* result0_out, int64_t
// result0_out_d0"); none for a function without the form. Unread names are commented out.
std::vector<std::string> impl_out_parameters(const lir::Function& f);
// The arguments for them in a call: the caller's tensors (`outs`, their C++ names, empty for a
// scalar result), or, with `outs` empty, those of the form that allocates (false, null, 0...).
std::string impl_out_arguments(const lir::Function& f, const std::vector<std::string>& outs);
// The rank checks of the tensor arguments in a typed API body, with the catalogue's message
// (ir/runtime_errors.def: argument_rank), failing through `fail` (a function with the signature of
// scangen_rt_v1::fail: line, column, then the message's parts).
std::string rank_checks(const lir::Function& fn, const Api& api, const std::string& fail);
// The same for the caller's result tensors of the form that writes into them ("result 0 ('h') of
// 'f' must have rank 2 (f32[T, N]), got rank 1"), and the check that none of them overlaps an
// argument or another (`disjoint`: a function with the signature of scangen_rt_v1::check_disjoint).
std::string out_checks(const lir::Function& fn, const Api& api, const std::string& fail, const std::string& disjoint);

// Names a function body reads, to leave unused parameters unnamed (no -Wunused-parameter).
void reads_of(const lir::Stmt& s, std::set<std::string>& out);

}  // namespace scangen::codegen
