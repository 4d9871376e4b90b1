#include "interpreter/failures.h"

#include "scangen/runtime/errors.h"

namespace scangen::interp {

void fail(const Loc& loc, RuntimeErrorId id, const std::vector<ErrorArg>& args) {
  throw RuntimeError(ir::runtime_error_text(id, args), loc.valid() ? loc.line : 0, loc.valid() ? loc.col : 0);
}

void fail_allocation(const AllocationError& e, const std::string& what, const Loc& loc) {
  const ErrorArg named = ErrorArg::text_of(what), dtype = ErrorArg::text_of(std::string(dtype_name(e.dtype()))),
                 shape = ErrorArg::shape(e.shape());
  if (e.bytes()) fail(loc, RuntimeErrorId::cannot_allocate, {named, dtype, shape, ErrorArg::number(*e.bytes())});
  fail(loc, RuntimeErrorId::cannot_allocate_over_limit,
       {named, dtype, shape, ErrorArg::text_of(std::to_string(kMaxTensorBytes))});
}

}  // namespace scangen::interp
