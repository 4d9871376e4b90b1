// The reference interpreter: runs a Function of the IR on host tensors. It is the semantic oracle
// of scangen; every backend and every rewrite is tested against it. It favours obviously-right
// code over speed, and takes the meaning of each element operation from templates/common/
// scangen_scalar.h, which emitted code uses too.
//
// Run-time errors (an index out of range, integer division by zero, a sequence too short for
// `steps`, an argument of the wrong shape) throw RuntimeError carrying the location in the .scan
// file, in the words of the catalogue (ir/runtime_errors.def); violated IR invariants throw
// InternalError.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "scangen/runtime/tensor.h"

namespace scangen::interp {

using ir::Function;

// The values of a function's dimension symbols, bound from its arguments.
struct SymbolValues {
  struct Bound {
    int64_t value;
    std::string source;  // "dimension 0 of 'A'" or "parameter 'n'"
  };
  std::map<std::string, Bound> symbols;
};

// Checks the arguments' count, dtypes and ranks against the function's signature: what every
// backend checks before it runs (the JIT API calls this for each; emitted code takes typed memory).
void check_argument_types(const Function& fn, const std::vector<HostTensor>& args);
// Checks arguments against the function's declared types (check_argument_types, then constant
// dimensions and symbols consistent everywhere) and returns the symbols' values.
SymbolValues check_arguments(const Function& fn, const std::vector<HostTensor>& args);
// Checks results against the declared result types with the symbols bound by the arguments.
void check_results(const Function& fn, const SymbolValues& symbols, const std::vector<HostTensor>& results);

class Interpreter {
 public:
  std::vector<HostTensor> run(const Function& fn, const std::vector<HostTensor>& args);

 private:
  std::vector<HostTensor> run_on_this_thread(const Function& fn, const std::vector<HostTensor>& args);
};

}  // namespace scangen::interp
