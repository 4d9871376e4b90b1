// Whether a step computes each row of a batch from that row alone: the property that lets a scan
// over sequences of different lengths give a row that has ended the inputs of a row that has not
// (frontend/sema_scan_real_rows.cpp), so that no padded row is ever computed on padding.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace scangen::ir {

// Where the batch is in a type: its axis, or one of these.
constexpr int kNoBatchAxis = -1, kSeveralBatchAxes = -2;
// The axis of `t` whose dimension is `batch` (the same dimension, not an equal size).
int batch_axis(const Type& t, const Dim& batch);

class RowWise {
 public:
  explicit RowWise(Dim batch) : batch_(std::move(batch)) {}

  // Whether node `n` computes each row of its result along the batch from the same row of each
  // operand that has the batch (operands without it are the same for every row), and nothing of
  // its result depends on which row it is: element-wise operations broadcast along the batch,
  // products of rows with weights shared by every row, reductions and reshapes along other axes,
  // shape checks. Not: reductions, products, indexing, gathers, scans or aranges along the batch.
  // `why` says what failed.
  bool holds(const Node& n, std::string* why) const;

 private:
  int axis(const Type& t) const { return batch_axis(t, batch_); }
  bool touches_batch(const Node& n) const;
  bool broadcasts_rows(const Node& n, int out) const;
  bool product_of_rows(const Node& n, int out) const;

  Dim batch_;
};

}  // namespace scangen::ir
