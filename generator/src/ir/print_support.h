// What the text printer (printer.h) and the Graphviz printer (dot.h) share, so that both show a
// program the same way: the names of values and the text of an operation.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace scangen::ir {

// The names of values: graph params by their declared name (`%A`, a repeated one `%A.2`),
// node results by number (`%5`, a multi-result node's `%5#name`).
class ValueNames {
 public:
  void name_params(const Graph& g);
  // A param met outside its graph's param list (a broken graph, drawn anyway).
  void name_param(const ParamNode& p);
  void name_outputs(const Node& n, int id);
  std::string ref(const Value& v) const;  // "%<undefined>" for a value not named here
  std::string param_list(const Graph& g) const;  // "%A: f32[n], %k: i32"

 private:
  std::string unique(const std::string& base);

  std::map<std::pair<const void*, int>, std::string> names_;
  std::map<std::string, int> used_names_;
};

// "[1, 2]".
std::string int_list(const std::vector<int64_t>& v);

// "fn power(%A: f32[n], %k: i32) -> f32[n]", the function's params already named.
std::string function_header(const Function& f, const ValueNames& names);

// The text of any operation but a param or a scan, its operands named: "add %1, %2".
std::string operation_text(const Node& n, const ValueNames& names);

}  // namespace scangen::ir
