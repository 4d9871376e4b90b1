// The builtin functions: the table of builtins.def, through which sema dispatches calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/sema_internal.h"

namespace scangen::sema {

// A builtin's max_args when it takes any number of arguments past min_args.
inline constexpr int kAnyCount = -1;

enum class BuiltinKeywords { None, Axis };
enum class BuiltinFirstArg { Value, Place };

// The IR operation a handler builds, where the handler serves several builtins.
struct BuiltinOp {
  std::optional<ir::UnaryOp> unary;
  std::optional<ir::BinaryOp> binary;
  std::optional<ir::ReduceOp> reduce;
};

using BuiltinHandler = SValue (Analyzer::*)(const ast::Call& c, Scope& scope, const Builtin& b);

// One row of builtins.def.
struct Builtin {
  const char* name;
  int min_args;
  int max_args;
  BuiltinKeywords keywords;
  BuiltinFirstArg first_arg;
  BuiltinHandler handler;
  BuiltinOp op;
  const char* signature;
  const char* summary;
};

// Every row, in the table's order.
const std::vector<Builtin>& builtins();
// The builtin named `name`, or nullptr.
const Builtin* find_builtin(const std::string& name);

}  // namespace scangen::sema
