// The call of an associative scan's runtime helper (a scan marked `assoc=<op>` by the rewrite
// parallel-scan): the arguments every backend's helper takes, in order, so that the lowering that
// makes the call and the loop-IR passes that decide its strategy agree on where each one is.
#pragma once

#include <vector>

#include "codegen/lowering/common.h"

namespace scangen::codegen::lowering {

// Argument positions of `scan_<op>(out, out_rows, init, a, a_step, a_lane, b, b_step, b_lane,
// steps, lanes, chunk_min_steps, chunk_max_lanes, min_chunk, scratch)` (templates/cpu/
// scangen_cpu_scan.h, templates/cuda/scangen_cuda_device.h); the CPU threads pass puts the thread
// count first and the CUDA printer the context.
enum AssocScanArg {
  kScanOut,
  kScanOutRows,
  kScanInit,
  kScanA,
  kScanAStep,
  kScanALane,
  kScanB,
  kScanBStep,
  kScanBLane,
  kScanSteps,
  kScanLanes,
  kScanChunkMinSteps,  // chunked only when steps >= this (0: never) ...
  kScanChunkMaxLanes,  // ... and lanes <= this: the cost model's decision (scan_strategy.h)
  kScanMinChunkArg,    // the fewest steps of a chunk (kScanMinChunk), which sizes the scratch
  kScanScratch,
  kScanArgCount,
};

// The fewest steps of one chunk: the carries of the chunks take 2 / kScanMinChunk of the rows'
// memory at most.
inline constexpr int64_t kScanMinChunk = 64;

// Where an associative scan's parts are, as the scan's lowering (scans.cpp) planned them.
struct AssocScanPlace {
  const ir::ScanNode& scan;
  ExprRef steps;
  ExprRef lanes;           // elements of one row of the state
  ExprRef out;             // its rows: every step's, or (last_only) one for the last step
  bool last_only = false;  // a window of one row (save-mem)
  const Tensor& init;
  const std::vector<Tensor>& sequences;  // the scan's sequences, whole
  const std::vector<ExprRef>& sequence_row_sizes;
};

class FunctionLowering;
class GraphLowering;

// Emits the helper's call, computing its operands' pointers from `outer`'s values.
void call_assoc_scan(FunctionLowering& f, GraphLowering& outer, const AssocScanPlace& place);

// Whether a loop-IR call is one of the associative scans' helpers (`scan_affine`, ... or their
// threaded forms `parallel_scan_*`).
bool is_assoc_scan_call(const Stmt& s);

}  // namespace scangen::codegen::lowering
