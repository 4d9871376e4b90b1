// The associative scans of emitted CUDA kernels (issue 16): a recurrence over `lanes` independent
// channels that the `parallel-scan` rewrite turned into one call, such as h = a * h + b. Called by
// every thread of the launch in uniform code, like sgc::matmul, and ending with a barrier.
// Embedded after scangen_cuda_device.h; compiles with NVRTC, nvcc and as host C++ under the
// emulation (scangen_cuda_emulation.h).
//
// Two strategies, chosen at run time by the same uniform rule in every thread (docs/cuda.md):
// - serial: each thread runs whole lanes (rank, rank + width, ...) over all steps, in the
//   interpreter's order, so the bits are the interpreter's. Taken when there are at least as
//   many lanes as threads, or when the generator's thresholds forbid chunking.
// - chunked, single pass with decoupled look-back: each lane's steps are cut into chunks of at
//   least min_chunk steps; chunk c of lane l is tile g = c * lanes + l (lane fastest: neighbouring
//   threads read neighbouring channels of a row), and thread rank takes tiles rank, rank + n, ...
//   in increasing order (n: the launch's width, at most kMaxChunksInFlight a lane). A tile folds
//   its operands into an aggregate, publishes it with a flag, combines its predecessors' aggregates backwards until it meets an inclusive value (the
//   state after a whole earlier chunk), publishes its own inclusive value, and writes its rows.
//   Progress: every block of a scangen launch is resident (one block or a cooperative grid), and a
//   tile waits only for tiles of smaller index, so the smallest unfinished tile always runs.
// Integer, max and min scans give the serial bits on both paths: partial results are always
// combined as op(earlier, later) in the callee's operand order. Floats differ by rounding only.
#ifndef SCANGEN_CUDA_SCAN_V1_H
#define SCANGEN_CUDA_SCAN_V1_H

namespace scangen_cuda_v1 {
namespace scan_detail {

namespace sgs = scangen::scalar_v1;

// The operands and result of one scan (the arguments of the public functions, docs/cuda.md).
// Element (t, l) of an operand is x[t * x_step + l * x_lane]; row t of out is out[t * lanes + l].
template <class T>
struct Args {
  T* out;
  long long out_rows;  // steps, or 1 when only the last step's value is wanted
  const T* init;
  const T* a;
  long long a_step, a_lane;
  const T* b;
  long long b_step, b_lane;
  long long steps, lanes;
};

// h = a * h + b. An aggregate of steps is the affine map h -> A * h + B they compose to.
template <class T>
struct Affine {
  static constexpr bool kUsesA = true;
  struct Agg {
    T a, b;
  };
  __device__ static T step(T h, T a, T b) { return sgs::add(sgs::mul(a, h), b); }
  __device__ static Agg first(T a, T b) { return {a, b}; }
  __device__ static Agg combine(Agg earlier, Agg later) {
    return {sgs::mul(later.a, earlier.a), sgs::add(sgs::mul(later.a, earlier.b), later.b)};
  }
  __device__ static T apply(Agg f, T h) { return step(h, f.a, f.b); }
};

// h = (h + b) * a, how the adjoint of an affine recurrence carries its cotangent: the affine map
// h -> a * h + a * b, aggregated as Affine's.
template <class T>
struct AddMul {
  static constexpr bool kUsesA = true;
  using Agg = typename Affine<T>::Agg;
  __device__ static T step(T h, T a, T b) { return sgs::mul(sgs::add(h, b), a); }
  __device__ static Agg first(T a, T b) { return {a, sgs::mul(a, b)}; }
  __device__ static Agg combine(Agg earlier, Agg later) { return Affine<T>::combine(earlier, later); }
  __device__ static T apply(Agg f, T h) { return Affine<T>::apply(f, h); }
};

// h = op(h, b), or op(b, h) when `NewFirst`. Every operator here is associative, and max and min
// are exactly so: a chain of them selects the leftmost of the greatest (NaN first) operands, so
// keeping each side's operand order keeps the bits. An aggregate is a value of T.
template <class T, class Fn, bool NewFirst>
struct Fold {
  static constexpr bool kUsesA = false;
  using Agg = T;
  __device__ static T step(T h, T, T b) { return NewFirst ? Fn::of(b, h) : Fn::of(h, b); }
  __device__ static Agg first(T, T b) { return b; }
  __device__ static Agg combine(Agg earlier, Agg later) { return NewFirst ? Fn::of(later, earlier) : Fn::of(earlier, later); }
  __device__ static T apply(Agg f, T h) { return NewFirst ? Fn::of(f, h) : Fn::of(h, f); }
};
struct AddFn {
  template <class T>
  __device__ static T of(T x, T y) { return sgs::add(x, y); }
};
struct MulFn {
  template <class T>
  __device__ static T of(T x, T y) { return sgs::mul(x, y); }
};
struct MaxFn {
  template <class T>
  __device__ static T of(T x, T y) { return sgs::max(x, y); }
};
struct MinFn {
  template <class T>
  __device__ static T of(T x, T y) { return sgs::min(x, y); }
};
template <class T> using AddOp = Fold<T, AddFn, false>;
template <class T> using MulOp = Fold<T, MulFn, false>;
template <class T> using MaxOp = Fold<T, MaxFn, false>;
template <class T> using MinOp = Fold<T, MinFn, false>;
template <class T> using MaxNewFirstOp = Fold<T, MaxFn, true>;
template <class T> using MinNewFirstOp = Fold<T, MinFn, true>;

// Operands of step t of lane l. Plain loads: an operand may be a buffer this kernel wrote before
// (the read-only path of __ldg is not coherent with such writes). `a` is read only by Affine.
template <class Op, class T>
__device__ inline T a_at(const Args<T>& s, long long t, long long l) {
  if constexpr (Op::kUsesA)
    return s.a[t * s.a_step + l * s.a_lane];
  else
    return T();
}
template <class T>
__device__ inline T b_at(const Args<T>& s, long long t, long long l) {
  return s.b[t * s.b_step + l * s.b_lane];
}

// Steps [t0, t1) of lane l from h, writing each row; the value after the last. The operands of a
// batch are loaded before its stores: the compiler cannot tell that `out` overlaps neither
// operand, and would otherwise wait for each step's loads after the previous step's store.
template <class Op, class T>
__device__ inline T write_rows(const Args<T>& s, long long l, long long t0, long long t1, T h) {
  constexpr int kBatch = 8;
  for (long long t = t0; t < t1; t += kBatch) {
    const int n = t1 - t < kBatch ? int(t1 - t) : kBatch;
    T av[kBatch] = {}, bv[kBatch] = {};
    for (int k = 0; k < kBatch; ++k)
      if (k < n) {
        av[k] = a_at<Op>(s, t + k, l);
        bv[k] = b_at(s, t + k, l);
      }
    for (int k = 0; k < kBatch; ++k)
      if (k < n) {
        h = Op::step(h, av[k], bv[k]);
        s.out[(t + k) * s.lanes + l] = h;
      }
  }
  return h;
}

// Steps [t0, t1) of lane l from h, writing nothing (no store stands between the loads).
template <class Op, class T>
__device__ inline T run_steps(const Args<T>& s, long long l, long long t0, long long t1, T h) {
  for (long long t = t0; t < t1; ++t) h = Op::step(h, a_at<Op>(s, t, l), b_at(s, t, l));
  return h;
}

// The aggregate of steps [t0, t1) of lane l, t0 < t1, folded in step order.
template <class Op, class T>
__device__ inline typename Op::Agg aggregate(const Args<T>& s, long long l, long long t0, long long t1) {
  typename Op::Agg agg = Op::first(a_at<Op>(s, t0, l), b_at(s, t0, l));
  for (long long t = t0 + 1; t < t1; ++t) agg = Op::combine(agg, Op::first(a_at<Op>(s, t, l), b_at(s, t, l)));
  return agg;
}

// The serial strategy: whole lanes per thread, the interpreter's order of operations.
template <class Op, class T>
__device__ __noinline__ void scan_lanes(long long rank, long long width, Args<T> s) {
  const bool last_only = s.out_rows != s.steps;
  for (long long l = rank; l < s.lanes; l += width) {
    const T h0 = s.init[l];
    if (!last_only) {
      write_rows<Op>(s, l, 0, s.steps, h0);
    } else if (s.steps > 0) {
      s.out[l] = run_steps<Op>(s, l, 0, s.steps, h0);
    }
  }
}

// A tile's state in the look-back, in a flag word of its own (zeroed before the pass).
enum TileState : unsigned { kTileEmpty = 0, kTileAggregate = 1, kTileInclusive = 2 };

// Where tiles publish, carved from the generator's scratch: aggregates (two values for Affine),
// inclusive values, then the flags.
template <class Op, class T>
struct Board {
  static constexpr long long kValues = Op::kUsesA ? 3 : 2;  // values of T per tile
  static constexpr long long kBytesPerTile = kValues * (long long)sizeof(T) + (long long)sizeof(unsigned);

  __device__ Board(T* scratch, long long tiles)
      : agg_b(scratch),
        agg_a(Op::kUsesA ? scratch + tiles : nullptr),
        inclusive(scratch + (kValues - 1) * tiles),
        flags((unsigned*)(scratch + kValues * tiles)) {}

  // Values other threads wrote: volatile, past the SM's L1, which is not coherent across SMs.
  __device__ static T load(const T* p) { return *(const volatile T*)p; }

  // The values, then a fence, then the flag: whoever sees the flag sees the values.
  __device__ void publish_aggregate(long long g, typename Op::Agg agg) {
    if constexpr (Op::kUsesA) {
      agg_a[g] = agg.a;
      agg_b[g] = agg.b;
    } else {
      agg_b[g] = agg;
    }
    __threadfence();
    atomicExch(&flags[g], (unsigned)kTileAggregate);
  }
  __device__ void publish_inclusive(long long g, T h) {
    inclusive[g] = h;
    __threadfence();
    atomicExch(&flags[g], (unsigned)kTileInclusive);
  }
  __device__ typename Op::Agg load_aggregate(long long g) const {
    if constexpr (Op::kUsesA)
      return {load(agg_a + g), load(agg_b + g)};
    else
      return load(agg_b + g);
  }

  // The state before tile g (chunk > 0) of its lane: the predecessors' aggregates, combined
  // backwards, applied to the first inclusive value met. Chunk 0 publishes an inclusive value,
  // so the walk ends there at the latest. The flags of kWindow predecessors are read at once, and
  // then the values of those published, so a walk waits for memory once per window, not twice
  // per tile.
  __device__ T look_back(long long g, long long lanes) const {
    constexpr int kWindow = 4;
    typename Op::Agg later{};
    bool have_later = false;
    for (long long j = g - lanes;;) {  // j: the nearest predecessor not yet combined
      unsigned state[kWindow];
      for (int k = 0; k < kWindow; ++k)
        state[k] = j - k * lanes >= 0 ? SCANGEN_CUDA_LOAD_VOLATILE(&flags[j - k * lanes]) : kTileEmpty;
      // The published run from j: aggregates up to the first empty flag, or through an inclusive one.
      int run = 0;
      bool inclusive_met = false;
      while (run < kWindow && state[run] != kTileEmpty && !inclusive_met) inclusive_met = state[run++] == kTileInclusive;
      if (run == 0) {
        __nanosleep(32);  // j has not published yet
        continue;
      }
      __threadfence();  // the flags before the values they guard
      typename Op::Agg earlier[kWindow];
      for (int k = 0; k < run - (inclusive_met ? 1 : 0); ++k) earlier[k] = load_aggregate(j - k * lanes);
      for (int k = 0; k < run - (inclusive_met ? 1 : 0); ++k) {
        later = have_later ? Op::combine(earlier[k], later) : earlier[k];
        have_later = true;
      }
      if (inclusive_met) {
        const T h = load(inclusive + (j - (run - 1) * lanes));
        return have_later ? Op::apply(later, h) : h;
      }
      j -= run * lanes;
    }
  }

  T* agg_b;
  T* agg_a;  // Affine only
  T* inclusive;
  unsigned* flags;
};

// The chunked strategy's plan: `chunks` chunks of `chunk_steps` steps per lane (the last shorter);
// chunks <= 1 means serial. Uniform: every thread computes the same plan.
struct Plan {
  long long chunks;
  long long chunk_steps;
  long long threads;  // the threads that take tiles (ranks below it)
};

// The most chunks of one lane in flight at once, bounding a look-back's walk: the tiles of a lane
// that threads take together all publish their aggregates and look back together, so a walk may
// pass all of them. With a thread per chunk of a single lane, a walk could pass 270,000 tiles on
// an H100; with more chunks than this in flight, threads beyond lanes * this stay idle.
// A member, not a namespace-scope constant: NVRTC warns about one that a kernel never uses (#177),
// and the kernels that call no scan but share the header with one that does would warn.
struct Limits {
  static constexpr long long kMaxChunksInFlight = 64;
};

// Chunking is allowed when the generator's thresholds allow it (chunk_min_steps > 0, steps at
// least that, lanes at most chunk_max_lanes) and there are fewer lanes than threads. Chunks are
// as short as min_chunk and the scratch allow: the scratch holds 2 * lanes * ceil(steps /
// min_chunk) values of T, and a tile needs Board::kBytesPerTile bytes of it.
template <class Op, class T>
__device__ inline Plan plan_scan(long long width, long long steps, long long lanes, long long chunk_min_steps,
                                 long long chunk_max_lanes, long long min_chunk, const T* scratch) {
  const Plan serial = {1, steps, width};
  if (chunk_min_steps <= 0 || steps < chunk_min_steps || lanes > chunk_max_lanes || lanes < 1 || lanes >= width ||
      min_chunk < 1 || !scratch)
    return serial;
  const long long granted_bytes = 2 * ((steps + min_chunk - 1) / min_chunk) * (long long)sizeof(T);  // per lane
  long long chunks = granted_bytes / Board<Op, T>::kBytesPerTile;
  if (chunks > steps / min_chunk) chunks = steps / min_chunk;
  if (chunks < 2) return serial;
  const long long chunk_steps = (steps + chunks - 1) / chunks;
  const long long in_flight = lanes * Limits::kMaxChunksInFlight;
  return {(steps + chunk_steps - 1) / chunk_steps, chunk_steps, in_flight < width ? in_flight : width};
}

// Before the pass: every tile's flag empty (the scratch is not cleared; a barrier follows).
template <class Op, class T>
__device__ __noinline__ void clear_flags(long long rank, long long width, T* scratch, long long tiles) {
  Board<Op, T> board(scratch, tiles);
  for (long long g = rank; g < tiles; g += width) board.flags[g] = kTileEmpty;
}

// The chunked strategy's single pass over the plan's threads. A tile reads its operands twice,
// for its aggregate and for its rows; the second read finds them in cache while chunks are short
// (docs/cuda.md).
template <class Op, class T>
__device__ __noinline__ void scan_tiles(long long rank, Args<T> s, Plan plan, T* scratch) {
  const long long tiles = s.lanes * plan.chunks;
  Board<Op, T> board(scratch, tiles);
  const bool last_only = s.out_rows != s.steps;
  for (long long g = rank; g < tiles; g += plan.threads) {
    SCANGEN_CUDA_RACE_POINT();  // the emulation's random delays: tiles finish out of order
    const long long l = g % s.lanes, c = g / s.lanes;
    const long long t0 = c * plan.chunk_steps;
    const long long t1 = t0 + plan.chunk_steps < s.steps ? t0 + plan.chunk_steps : s.steps;
    T after;  // the state after this tile
    if (c == 0) {
      // No predecessor: the serial steps from init, published when done.
      after = last_only ? run_steps<Op>(s, l, t0, t1, s.init[l]) : write_rows<Op>(s, l, t0, t1, s.init[l]);
      board.publish_inclusive(g, after);
    } else {
      const typename Op::Agg own = aggregate<Op>(s, l, t0, t1);
      board.publish_aggregate(g, own);
      SCANGEN_CUDA_RACE_POINT();
      const T before = board.look_back(g, s.lanes);
      after = Op::apply(own, before);
      board.publish_inclusive(g, after);  // before the rows: successors need not wait for them
      if (!last_only) write_rows<Op>(s, l, t0, t1, before);
    }
    if (last_only && c == plan.chunks - 1) s.out[l] = after;
  }
}

template <class Op, class T>
__device__ inline void scan(Context& ctx, const Args<T>& s, long long chunk_min_steps, long long chunk_max_lanes,
                            long long min_chunk, T* scratch) {
  const Plan plan = plan_scan<Op>(ctx.width(), s.steps, s.lanes, chunk_min_steps, chunk_max_lanes, min_chunk, scratch);
  if (plan.chunks > 1) {
    clear_flags<Op>(ctx.rank(), ctx.width(), scratch, s.lanes * plan.chunks);
    ctx.barrier();
    scan_tiles<Op>(ctx.rank(), s, plan, scratch);
  } else {
    scan_lanes<Op>(ctx.rank(), ctx.width(), s);
  }
  ctx.barrier();
}

}  // namespace scan_detail

// The eight operators of the parallel-scan rewrite, all with the same arguments (docs/cuda.md):
// out[r * lanes + l] for r < out_rows (steps, or 1: only the last step's value); init[l]; operand
// element (t, l) at x[t * x_step + l * x_lane] (x_step may be negative or 0, x_lane 1 or 0); the
// generator's thresholds; `scratch`: 2 * lanes * ceil(steps / min_chunk) elements of T, not
// initialised (null when chunk_min_steps is 0). `a` is read by scan_affine and scan_add_mul only.
#define SCANGEN_CUDA_SCAN_OPERATOR(name, op)                                                                   \
  template <class T>                                                                                           \
  __device__ inline void name(Context& ctx, T* out, long long out_rows, const T* init, const T* a,            \
                              long long a_step, long long a_lane, const T* b, long long b_step, long long b_lane, \
                              long long steps, long long lanes, long long chunk_min_steps,                    \
                              long long chunk_max_lanes, long long min_chunk, T* scratch) {                   \
    const scan_detail::Args<T> s = {out, out_rows, init, a, a_step, a_lane, b, b_step, b_lane, steps, lanes};  \
    scan_detail::scan<op>(ctx, s, chunk_min_steps, chunk_max_lanes, min_chunk, scratch);                      \
  }
SCANGEN_CUDA_SCAN_OPERATOR(scan_affine, scan_detail::Affine<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_add_mul, scan_detail::AddMul<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_add, scan_detail::AddOp<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_mul, scan_detail::MulOp<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_max, scan_detail::MaxOp<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_min, scan_detail::MinOp<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_max_new_first, scan_detail::MaxNewFirstOp<T>)
SCANGEN_CUDA_SCAN_OPERATOR(scan_min_new_first, scan_detail::MinNewFirstOp<T>)
#undef SCANGEN_CUDA_SCAN_OPERATOR

}  // namespace scangen_cuda_v1

#endif  // SCANGEN_CUDA_SCAN_V1_H
