// Shapes of a scan body's values without running a step, for a scan of zero steps and for the
// rows a scan's outputs keep. Only what a shape needs is evaluated (the values that size an
// arange, a fill, a slice or a nested scan), exactly what the lowering computes before a loop. A
// size that depends on the step (a param without a value) is kUnknownSize: a step value may have
// one, an output's rows never do (StepVariance, which the frontend checks).
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "interpreter/node_eval.h"

namespace scangen::interp {

class ShapeEval {
 public:
  static constexpr int64_t kUnknownSize = -1;

  ShapeEval(std::vector<Shape> param_shapes, std::vector<std::optional<HostTensor>> param_values)
      : param_shapes_(std::move(param_shapes)), param_values_(std::move(param_values)) {}

  Shape shape(const ir::Value& v);
  // Whether v's value can be computed here: it reaches no param without a value (a size needs
  // only that dimension of its operand).
  bool has_value(const ir::Value& v);
  HostTensor value(const ir::Value& v);

  // The step shapes of a scan's outputs given its inputs' values.
  static std::vector<Shape> rows_from_inputs(const ir::ScanNode& n, std::vector<Shape> input_shapes,
                                             std::vector<std::optional<HostTensor>> input_values);

  // The number of steps and the step shape of each output of a scan (kUnknownSize where they
  // depend on the enclosing step). With_steps false leaves steps at 0: the rows alone do not need
  // it, and for a scan with `until` the steps come from evaluating the scan itself, which for the
  // scan being evaluated (rows_from_inputs, zero steps taken) recursed without end.
  struct ScanShapes {
    int64_t steps = 0;
    std::vector<Shape> rows;
  };
  ScanShapes scan_shapes(const ir::ScanNode& n, bool with_steps = true);

 private:
  // A size as a value, or nothing when it depends on the step.
  std::optional<int64_t> size_of(const ir::Value& v);
  int64_t steps_of(const ir::ScanNode& n);
  std::vector<Shape> node_shapes(const ir::Node& n);
  Shape sizes_shape(const ir::Node& n);
  Shape index_shape(const ir::IndexNode& n);
  Shape partial_broadcast(const Shape& a, const Shape& b, const Loc& loc);

  std::vector<Shape> param_shapes_;
  std::vector<std::optional<HostTensor>> param_values_;
  std::unordered_map<const ir::Node*, std::vector<Shape>> shapes_;
  std::unordered_map<const ir::Node*, bool> has_value_;
  RunState run_;  // its own: shapes are evaluated apart from any run
  std::unordered_map<const ir::Node*, std::vector<HostTensor>> values_;
};

}  // namespace scangen::interp
