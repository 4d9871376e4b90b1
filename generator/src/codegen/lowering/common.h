// The lowering's shared vocabulary (program IR -> loop IR, generator/src/codegen/lower.h): fresh
// C++ names, the lowered value (Tensor), message parts for shapes, and what the parts of the
// lowering ask of a node's kind.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/cpp_names.h"
#include "codegen/loop_ir.h"
#include "ir/ir.h"
#include "ir/runtime_errors.h"

namespace scangen::codegen::lowering {

using ir::DimCheck;
using ir::IndexSpec;
using ir::NodeKind;
using ir::Value;
using lir::ExprRef;
using lir::MessagePart;
using ir::RuntimeErrorId;
// An argument of a run-time error's message: text, or integers the program computes.
using ErrorArg = ir::ErrorArg<ExprRef>;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

class Names {
 public:
  // A C++ identifier derived from `hint`, different from every name given out before.
  std::string fresh(const std::string& hint) {
    std::string base;
    for (char c : hint) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (ok) base += c;
      else if (!base.empty() && base.back() != '_') base += '_';
    }
    while (!base.empty() && base.back() == '_') base.pop_back();
    if (base.empty()) base = "v";
    if (base[0] >= '0' && base[0] <= '9') base = "v" + base;
    if (base[0] == '_') base = "v" + base;
    if (is_reserved_cpp_name(base)) base += "_";
    int& n = used_[base];
    ++n;
    if (n == 1) return base;
    std::string candidate;
    do {
      candidate = base + "_" + std::to_string(n++);
    } while (used_.count(candidate));
    used_[candidate] = 1;
    return candidate;
  }
  void reserve(const std::string& name) { used_[name] = 1; }

 private:
  std::map<std::string, int> used_;
};

// A lowered value: a scalar expression, or a pointer to contiguous elements with run-time dims.
struct Tensor {
  DType dtype = DType::F32;
  int rank = 0;
  ExprRef scalar;
  ExprRef data;
  std::vector<ExprRef> dims;
  std::string storage;  // the storage that owns `data`, if any (arguments and their views have none)
  // `data` is the start of `storage`, which holds exactly this value's elements: as a result, the
  // storage may lend the caller's memory instead (FunctionLowering::lend_result).
  bool whole = false;
};

std::string dtype_text(DType d);
// The message of a catalogue entry (ir/runtime_errors.def) as the parts a check prints; integers
// known when compiling are text.
std::vector<MessagePart> message(RuntimeErrorId id, const std::vector<ErrorArg>& args);
// Operations computed element by element from their operands (fused into loops over their elements).
bool computes_elementwise(NodeKind k);

}  // namespace scangen::codegen::lowering
