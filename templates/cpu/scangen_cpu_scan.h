// The associative scans of emitted CPU code (issue 16): a recurrence state h over `lanes`
// independent channels whose step is associative, computed by one call instead of a time loop.
// Every generated source embeds this text after scangen_cpu_matmul.h (whose vector width it
// uses); the threaded forms, parallel_scan_*, are in scangen_cpu_threads.h, which follows it.
//
// The operators (h: the state before the step; a, b: this step's operands):
//   scan_affine h = add(mul(a, h), b)     scan_add h = add(h, b)     scan_mul h = mul(h, b)
//   scan_add_mul h = mul(add(h, b), a)    (an adjoint's form: the affine map h -> a h + a b)
//   scan_max h = max(h, b)   scan_min h = min(h, b)   scan_max_new_first h = max(b, h)   ...min
// with the functions of scangen_scalar.h (integers wrap; float max/min propagate the first NaN and
// the first operand wins a tie). Operand element (t, l) is x[t * x_step + l * x_lane] (x_step may
// be negative or 0, x_lane is 0 or 1); init[l] is the state before step 0; out row t
// (out[t * lanes + l]) the state after step t, or, with out_rows == 1, only the last state.
//
// Serial or chunked: the generator's cost model passes thresholds; chunking (any association
// order) is allowed only when chunk_min_steps > 0, steps >= chunk_min_steps and lanes <=
// chunk_max_lanes. Otherwise the loop is the serial one, for t, for l, in that order: the bits of
// the interpreter. Chunked, every step's operand is folded into an aggregate (the composition of
// the steps of a range: for affine the pair (A, B) of h -> A * h + B, otherwise one value),
// aggregates are always combined as op(earlier, later), so integer (modular arithmetic), max and
// min results are bit-identical to the serial loop; float add, mul and affine results differ by
// rounding (docs/performance.md, "Parallel scan (issue 16): CPU kernel", gives the bound), and
// infinite or NaN affine coefficients may give NaN where the serial loop gives infinity.
//
// How it is fast. One channel (lanes == 1), affine, add or mul: vectors of W steps are scanned in
// registers (log2 W shifted combines; for an invariant a the powers a^k are precomputed), then the
// carry of the previous vectors is applied to the whole vector: one pass over memory, and the
// only serial dependence is one multiply and one add per W steps. Several threads (the parallel_
// forms): the steps are cut into chunks of at least min_chunk; each chunk's aggregate is computed
// (reading the operands only; for one lane as independent chains: Horner over vectors for add,
// mul and invariant affine, four chains for max and min), the carries are scanned on the calling
// thread, then every chunk is scanned from its carry: the operands are read twice and the result
// written once. Many lanes stay serial in time, vectorized over lanes; threads take bands of lanes.
//
// Memory: nothing is allocated. The threaded chunked form keeps two values per lane and chunk in
// `scratch` (2 * lanes * ceil(steps / min_chunk) elements, allocated by the generated code).
#ifndef SCANGEN_CPU_SCAN_V1_H
#define SCANGEN_CPU_SCAN_V1_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#endif

namespace scangen_rt_v1 {
namespace scan_v1 {

namespace sg = scangen::scalar_v1;

enum class Op { Affine, AddMul, Add, Mul, Max, Min, MaxNewFirst, MinNewFirst };

// The operators that read `a`: affine, and (h + b) * a, which is the affine map h -> a h + a b.
template <Op op> inline constexpr bool kUsesA = op == Op::Affine || op == Op::AddMul;

// The operands of one call: element (t, l) of x is x[t * x_step + l * x_lane].
template <class T> struct Operands {
  const T* a;
  int64_t a_step, a_lane;
  const T* b;
  int64_t b_step, b_lane;
};

// One step of the recurrence, exactly as the sequential loop computes it.
template <Op op, class T> inline T step(T h, T a, T b) {
  if constexpr (op == Op::Affine) return sg::add(sg::mul(a, h), b);
  else if constexpr (op == Op::AddMul) return sg::mul(sg::add(h, b), a);
  else if constexpr (op == Op::Add) return sg::add(h, b);
  else if constexpr (op == Op::Mul) return sg::mul(h, b);
  else if constexpr (op == Op::Max) return sg::max(h, b);
  else if constexpr (op == Op::Min) return sg::min(h, b);
  else if constexpr (op == Op::MaxNewFirst) return sg::max(b, h);
  else return sg::min(b, h);
}

// Steps of the serial loop, rows [t0, t1) of lanes [l0, l1): the state before step t0 is
// prev0[l]; rows go to out (or, last_only, all to row 0, which then holds the running state). The
// lane strides are template arguments (0 or 1) so the lane loop vectorizes.
template <Op op, class T, int kALane, int kBLane>
void scan_rows(T* out, bool last_only, const T* prev0, const Operands<T>& x, int64_t t0, int64_t t1, int64_t l0,
               int64_t l1, int64_t lanes) {
  if (l1 - l0 == 1 && t1 > t0) {  // one lane: a plain scalar chain
    T h = prev0[l0];
    const T* a = x.a + l0 * kALane;
    const T* b = x.b + l0 * kBLane;
    if (last_only) {
      for (int64_t t = t0; t < t1; ++t) h = step<op>(h, a[t * x.a_step], b[t * x.b_step]);
      out[l0] = h;
    } else {
      for (int64_t t = t0; t < t1; ++t) out[t * lanes + l0] = h = step<op>(h, a[t * x.a_step], b[t * x.b_step]);
    }
    return;
  }
  for (int64_t t = t0; t < t1; ++t) {
    T* row = last_only ? out : out + t * lanes;
    const T* prev = t == t0 ? prev0 : last_only ? out : row - lanes;
    const T* a = x.a + t * x.a_step;
    const T* b = x.b + t * x.b_step;
    SCANGEN_IVDEP
    for (int64_t l = l0; l < l1; ++l) row[l] = step<op>(prev[l], a[l * kALane], b[l * kBLane]);
  }
}

// scan_rows with the lane strides of x.
template <Op op, class T>
void scan_rows_any(T* out, bool last_only, const T* prev0, const Operands<T>& x, int64_t t0, int64_t t1,
                   int64_t l0, int64_t l1, int64_t lanes) {
  const bool a1 = kUsesA<op> && x.a_lane != 0, b1 = x.b_lane != 0;
  if (a1 && b1) scan_rows<op, T, 1, 1>(out, last_only, prev0, x, t0, t1, l0, l1, lanes);
  else if (a1) scan_rows<op, T, 1, 0>(out, last_only, prev0, x, t0, t1, l0, l1, lanes);
  else if (b1) scan_rows<op, T, 0, 1>(out, last_only, prev0, x, t0, t1, l0, l1, lanes);
  else scan_rows<op, T, 0, 0>(out, last_only, prev0, x, t0, t1, l0, l1, lanes);
}

// ---- One channel in vector registers ----------------------------------------------------------

// Integers are computed in their unsigned type (wrapping, as scangen_scalar.h does): the vector
// arithmetic is then exact modular arithmetic, whatever the association order.
template <class T, bool = sg::is_int_v<T>> struct compute_of { using type = T; };
template <class T> struct compute_of<T, true> { using type = sg::unsigned_t<T>; };

// Steps per vector: the vector width of the matrix product (scangen_cpu_matmul.h).
template <class T> inline constexpr int kLanesOf = matmul_v1::kVectorBytes / int(sizeof(T));

template <class T> struct Vec {
  using E = typename compute_of<T>::type;
  static constexpr int W = kLanesOf<T>;
  typedef E type __attribute__((vector_size(W * sizeof(E))));
};

// Element i of the result is v[i - K], or an element of the (uniform) fill vector for i < K.
template <int K, class V, size_t... I> inline V shift_up(V v, V fill, std::index_sequence<I...>) {
  constexpr int W = int(sizeof...(I));
  return __builtin_shufflevector(fill, v, (W + int(I) - K)...);
}

// The constant c as a value the optimizer does not know: clang turns a shift that fills with a
// known zero into a masked expand, three times slower on Zen 4 than the two-vector permute it
// uses otherwise.
template <class V> inline V opaque(V c) {
#if defined(__x86_64__)
  __asm__("" : "+v"(c));
#endif
  return c;
}
template <class V, size_t... I> inline V reversed(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (int(sizeof...(I)) - 1 - int(I))...);
}

// Steps t .. t + W - 1 of an operand of one lane, in step order (x_step 1, -1 or any).
template <class T, class V> inline V load_steps(const T* x, int64_t x_step, int64_t t) {
  constexpr int W = kLanesOf<T>;
  using E = typename compute_of<T>::type;
  V v{};
  if (x_step == 1) {
    std::memcpy(&v, x + t, sizeof v);
  } else if (x_step == -1) {
    std::memcpy(&v, x - (t + W - 1), sizeof v);
    v = reversed(v, std::make_index_sequence<W>());
  } else {
    for (int i = 0; i < W; ++i) v[i] = static_cast<E>(x[(t + i) * x_step]);
  }
  return v;
}

// Results of more than this many bytes go to memory with non-temporal stores: they would not stay
// in the cache anyway, and such stores skip reading each line before writing it (a third of the
// memory traffic of a one-lane scan).
inline constexpr int64_t kStreamBytes = int64_t(8) << 20;

// Stores a vector at p, aligned to its size; non-temporal where the target has such stores.
template <class V> inline void store_vector(void* p, const V& v, bool stream) {
#if defined(__x86_64__) && defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if (stream) return _mm512_stream_si512(static_cast<__m512i*>(p), reinterpret_cast<const __m512i&>(v));
  }
#endif
#if defined(__x86_64__) && defined(__AVX__)
  if constexpr (sizeof(V) == 32) {
    if (stream) return _mm256_stream_si256(static_cast<__m256i*>(p), reinterpret_cast<const __m256i&>(v));
  }
#endif
#if defined(__x86_64__) && defined(__SSE2__)
  if constexpr (sizeof(V) == 16) {
    if (stream) return _mm_stream_si128(static_cast<__m128i*>(p), reinterpret_cast<const __m128i&>(v));
  }
#endif
  static_cast<void>(stream);
  std::memcpy(p, &v, sizeof v);
}

// Orders non-temporal stores before what follows (another thread reading the results).
inline void end_streaming() {
#if defined(__x86_64__) && defined(__SSE2__)
  _mm_sfence();
#endif
}

// x^n by squaring (the invariant coefficient's power in an aggregate).
template <class E> inline E power(E x, int64_t n) {
  E result = E(1);
  for (; n > 0; n >>= 1) {
    if (n & 1) result = result * x;
    x = x * x;
  }
  return result;
}

// The in-register inclusive scan of one vector: element i becomes the composition of steps 0..i
// of the vector (for affine, the pair (A, B); with an invariant a, A is a^(i+1), not computed).
template <Op op, class V, int W, int K = 1>
inline void scan_vector(V& b, V& a, const V* powers, bool invariant) {
  if constexpr (K < W) {
    const auto seq = std::make_index_sequence<W>();
    using E = std::remove_reference_t<decltype(b[0])>;
    const V zero = opaque(V{}), one = opaque(V{} + E(1));
    if constexpr (op == Op::Add) {
      b = b + shift_up<K>(b, zero, seq);
    } else if constexpr (op == Op::Mul) {
      b = b * shift_up<K>(b, one, seq);
    } else if (invariant) {
      b = b + powers[0] * shift_up<K>(b, zero, seq);
    } else {
      b = b + a * shift_up<K>(b, zero, seq);
      a = a * shift_up<K>(a, one, seq);
    }
    scan_vector<op, V, W, 2 * K>(b, a, powers + 1, invariant);
  }
}

// Steps [t0, t1) of one lane from the state h, one at a time: the edges of scan_one_lane. Writes
// out[t] when out is not null, multiplies each a into *a_product when that is not null.
template <Op op, class T>
T single_steps(T* out, const Operands<T>& x, int64_t t0, int64_t t1, T h, T* a_product) {
  for (int64_t t = t0; t < t1; ++t) {
    const T a = op == Op::Affine ? x.a[t * x.a_step] : T(0);
    h = step<op>(h, a, x.b[t * x.b_step]);
    if (out != nullptr) out[t] = h;
    if (a_product != nullptr) *a_product = sg::mul(*a_product, a);
  }
  return h;
}

// Steps [t0, t1) of one lane from the state h (affine, add or mul): writes h after each step to
// out[t] when out is not null, returns the last state. With a_product (affine, a per step), also
// multiplies the product of the range's a into *a_product. `stream`: store non-temporally (the
// call's results are larger than kStreamBytes).
template <Op op, class T>
T scan_one_lane(T* out, const Operands<T>& x, int64_t t0, int64_t t1, T h0, T* a_product, bool stream) {
  using E = typename compute_of<T>::type;
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::W;
  const bool invariant = op == Op::Affine && x.a_step == 0;
  const E a0 = op == Op::Affine ? E(x.a[0]) : E(1);
  V powers[8];     // a^1, a^2, a^4, ... (invariant a)
  V power_row{};   // a^1 .. a^W
  for (int k = 0, p = 1; p < W && k < 8; ++k, p *= 2) powers[k] = V{} + power(a0, p);
  for (int i = 0; i < W; ++i) power_row[i] = power(a0, i + 1);
  const E a_w = power(a0, W);
  V product = V{} + E(1);
  int64_t t = t0;
  // Single steps until out is aligned to a vector: a store that straddles two cache lines costs
  // twice (std::vector's memory is only 16-byte aligned).
  T state = h0;
  if (out != nullptr) {
    const int64_t misaligned = int64_t(reinterpret_cast<uintptr_t>(out + t) % sizeof(V)) / int64_t(sizeof(T));
    const int64_t end = misaligned == 0 ? t : t + W - misaligned < t1 ? t + W - misaligned : t1;
    state = single_steps<op>(out, x, t, end, state, invariant ? nullptr : a_product);
    t = end;
  }
  E h = E(state);
  // The operands in locals: stores to out could alias x as far as the compiler knows.
  const T *const a_data = x.a, *const b_data = x.b;
  const int64_t a_step = x.a_step, b_step = x.b_step;
  stream = stream && out != nullptr;
  for (; t + W <= t1; t += W) {
    V b = load_steps<T, V>(b_data, b_step, t);
    V a = invariant || op != Op::Affine ? V{} : load_steps<T, V>(a_data, a_step, t);
    if (a_product != nullptr && !invariant) product = product * a;
    scan_vector<op, V, W>(b, a, powers, invariant);
    V result;
    if constexpr (op == Op::Add) result = b + h;
    else if constexpr (op == Op::Mul) result = b * h;
    else result = b + (invariant ? power_row : a) * h;
    if (out != nullptr) store_vector(out + t, result, stream);
    // The one serial dependence: h of the next vector from this one's composition.
    if constexpr (op == Op::Add) h = b[W - 1] + h;
    else if constexpr (op == Op::Mul) h = b[W - 1] * h;
    else if (invariant) h = b[W - 1] + a_w * h;
    else h = b[W - 1] + a[W - 1] * h;
  }
  if (stream) end_streaming();
  state = single_steps<op>(out, x, t, t1, T(h), invariant ? nullptr : a_product);  // the steps left over
  if (a_product != nullptr) {
    if (invariant) {
      *a_product = sg::mul(*a_product, T(power(a0, t1 - t0)));
    } else {
      E p = E(1);
      for (int i = 0; i < W; ++i) p = p * product[i];
      *a_product = sg::mul(*a_product, T(p));
    }
  }
  return state;
}

// The value that leaves a state unchanged, for an aggregate computed as a scan from it (-0 for
// float add: -0 + x is x for every x, +0 included).
template <Op op, class T> inline T identity() {
  if constexpr (op == Op::Mul) return T(1);
  else if constexpr (op == Op::Add && sg::is_float_v<T>) return T(-0.0);
  else return T(0);
}

// The aggregate of steps [t0, t1) of one lane without the states in between, for add, mul and
// affine with an invariant a (the first pass of the threaded scan, which only reads): for affine,
// B = sum over j of a^(t1-1-j) b_j, as kAccumulators Horner chains over vectors (each multiplied by
// a^(kAccumulators W) per round, the vector's element i weighted by a^(W-1-i)), far cheaper than a
// scan in registers. Returns B; A (affine) is a^(t1 - t0).
inline constexpr int kAccumulators = 4;
template <Op op, class T> T reduce_one_lane(const Operands<T>& x, int64_t t0, int64_t t1, T* A) {
  using E = typename compute_of<T>::type;
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::W;
  constexpr int64_t kRound = int64_t(kAccumulators) * W;
  const E a0 = op == Op::Affine ? E(x.a[0]) : E(1);
  const E start = E(identity<op, T>());
  V acc[kAccumulators], weights{};
  for (V& v : acc) v = V{} + start;
  for (int i = 0; i < W; ++i) weights[i] = power(a0, W - 1 - i);
  const V round_power = V{} + power(a0, kRound);
  int64_t t = t0;
  for (; t + kRound <= t1; t += kRound) {
    for (int k = 0; k < kAccumulators; ++k) {
      const V b = load_steps<T, V>(x.b, x.b_step, t + k * W);
      if constexpr (op == Op::Add) acc[k] = acc[k] + b;
      else if constexpr (op == Op::Mul) acc[k] = acc[k] * b;
      else acc[k] = acc[k] * round_power + b * weights;
    }
  }
  // The chains in step order: chain k is followed by W (kAccumulators - 1 - k) steps of its round.
  V total = acc[0];
  for (int k = 1; k < kAccumulators; ++k) {
    if constexpr (op == Op::Add) total = total + acc[k];
    else if constexpr (op == Op::Mul) total = total * acc[k];
    else total = total * power(a0, W) + acc[k];
  }
  E sum = start;
  for (int i = 0; i < W; ++i) sum = op == Op::Mul ? sum * total[i] : sum + total[i];
  T b_total = T(sum);
  for (; t < t1; ++t) b_total = step<op>(b_total, T(a0), x.b[t * x.b_step]);  // the steps left over
  if (op == Op::Affine) *A = T(power(a0, t1 - t0));
  return b_total;
}

// Whether scan_one_lane computes this operator.
template <Op op> inline constexpr bool kVectorizedInTime = op == Op::Affine || op == Op::Add || op == Op::Mul;

// ---- Chunks of steps --------------------------------------------------------------------------

// The aggregate of steps [t0, t1) of one lane for max and min: kAccumulators contiguous parts,
// each folded by a chain of its own (independent chains: the latency of one step is hidden), then
// combined in step order, op(earlier, later): the bits of one chain.
template <Op op, class T> T fold_one_lane(const Operands<T>& x, int64_t t0, int64_t t1) {
  const int64_t part = (t1 - t0) / kAccumulators;
  const T* b = x.b;
  const int64_t stride = x.b_step;
  T acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = b[(t0 + k * part) * stride];
  for (int64_t i = 1; i < part; ++i)
    for (int k = 0; k < kAccumulators; ++k) acc[k] = step<op>(acc[k], T(0), b[(t0 + k * part + i) * stride]);
  T total = part > 0 ? acc[0] : b[t0 * stride];
  for (int k = 1; k < kAccumulators && part > 0; ++k) total = step<op>(total, T(0), acc[k]);
  for (int64_t t = part > 0 ? t0 + kAccumulators * part : t0 + 1; t < t1; ++t)  // the steps left over
    total = step<op>(total, T(0), b[t * stride]);
  return total;
}

// The aggregate of steps [t0, t1) of every lane: A[l], B[l] (A for affine only). t1 > t0.
template <Op op, class T>
void aggregate(T* A, T* B, const Operands<T>& x, int64_t t0, int64_t t1, int64_t lanes) {
  if constexpr (kVectorizedInTime<op>) {
    if (lanes == 1) {
      if (op != Op::Affine || x.a_step == 0) {
        B[0] = reduce_one_lane<op>(x, t0, t1, A);
        return;
      }
      A[0] = T(1);
      B[0] = scan_one_lane<op, T>(nullptr, x, t0, t1, identity<op, T>(), A, false);
      return;
    }
  } else if (lanes == 1 && !kUsesA<op>) {
    B[0] = fold_one_lane<op>(x, t0, t1);
    return;
  }
  for (int64_t l = 0; l < lanes; ++l) {
    B[l] = x.b[t0 * x.b_step + l * x.b_lane];
    if constexpr (kUsesA<op>) A[l] = x.a[t0 * x.a_step + l * x.a_lane];
    if constexpr (op == Op::AddMul) B[l] = sg::mul(A[l], B[l]);  // the map h -> a h + a b
  }
  for (int64_t t = t0 + 1; t < t1; ++t) {
    const T* a = x.a + t * x.a_step;
    const T* b = x.b + t * x.b_step;
    for (int64_t l = 0; l < lanes; ++l) {
      if constexpr (op == Op::Affine) {  // (a, b) after (A, B): (a * A, a * B + b)
        const T at = a[l * x.a_lane];
        A[l] = sg::mul(at, A[l]);
        B[l] = sg::add(sg::mul(at, B[l]), b[l * x.b_lane]);
      } else if constexpr (op == Op::AddMul) {  // (a, a * b) after (A, B): (a * A, (B + b) * a)
        const T at = a[l * x.a_lane];
        A[l] = sg::mul(at, A[l]);
        B[l] = step<op>(B[l], at, b[l * x.b_lane]);
      } else {
        B[l] = step<op>(B[l], T(0), b[l * x.b_lane]);
      }
    }
  }
}

// The state after a range whose aggregate is (A, B), from the state h before it.
template <Op op, class T> inline T apply(T A, T B, T h) {
  if constexpr (kUsesA<op>) return sg::add(sg::mul(A, h), B);
  else return step<op>(h, T(0), B);
}

// Steps [t0, t1) of every lane from prev0 (the state before t0), as the serial loop or, one lane,
// in vector registers.
template <Op op, class T>
void scan_range(T* out, bool last_only, const T* prev0, const Operands<T>& x, int64_t t0, int64_t t1, int64_t lanes,
                bool stream) {
  if constexpr (kVectorizedInTime<op>) {
    if (lanes == 1) {
      const T last = scan_one_lane<op, T>(last_only ? nullptr : out, x, t0, t1, prev0[0], nullptr, stream);
      if (last_only) out[0] = last;
      return;
    }
  }
  scan_rows_any<op>(out, last_only, prev0, x, t0, t1, 0, lanes, lanes);
}

// ---- The call ---------------------------------------------------------------------------------

// The arguments of one call.
template <class T> struct Call {
  T* out;
  int64_t out_rows;
  const T* init;
  Operands<T> x;
  int64_t steps, lanes, chunk_min_steps, chunk_max_lanes, min_chunk;
  T* scratch;
  bool last_only() const { return out_rows == 1 && steps > 1; }
  // Whether the results are large enough to be stored non-temporally (see kStreamBytes).
  bool streams() const { return out_rows * lanes * int64_t(sizeof(T)) > kStreamBytes; }
  bool may_chunk() const { return chunk_min_steps > 0 && steps >= chunk_min_steps && lanes <= chunk_max_lanes; }
};

// Runs the loops of a call on the calling thread only: what scan_* use. The pool's runner
// (scangen_cpu_threads.h) has the same members.
struct CallingThread {
  int64_t workers() const { return 1; }
  int64_t forced_grain() const { return -1; }
  template <class F> void for_each(int64_t begin, int64_t end, int64_t, int64_t, F&& body) const {
    if (end > begin) body(begin, end);
  }
};

// The fewest steps * lanes of a band of lanes worth a thread of its own, serial in time.
inline constexpr int64_t kScanWorkPerThread = int64_t(1) << 16;
// Time chunks per thread of a chunked scan: a delayed thread's share is taken over by the others.
inline constexpr int64_t kTimeChunksPerThread = 4;

// Serial in time; lanes in bands over the runner's threads, each band running every step. One
// lane runs in vector registers when reassociating is allowed (in_registers), else as the loop.
template <Op op, class T, class Runner> void run_serial(const Call<T>& c, const Runner& runner, bool in_registers) {
  if (c.lanes == 1 && in_registers)
    return scan_range<op>(c.out, c.last_only(), c.init, c.x, 0, c.steps, 1, c.streams());
  const int64_t per_line = 64 / int64_t(sizeof(T));  // lanes of a cache line: bands do not share lines
  const int64_t steps = c.steps > 0 ? c.steps : 1;
  int64_t grain = (kScanWorkPerThread + steps - 1) / steps;
  if (grain < per_line) grain = per_line;
  runner.for_each(0, c.lanes, grain, per_line, [&](int64_t l0, int64_t l1) {
    scan_rows_any<op>(c.out, c.last_only(), c.init, c.x, 0, c.steps, l0, l1, c.lanes);
  });
}

// Chunked over time across the runner's threads: aggregates of the chunks (in scratch: A then B,
// lanes values per chunk), the carries scanned in order on this thread (B of chunk k becomes the
// state after chunk k), then every chunk scanned from the state before it.
template <Op op, class T, class Runner> void run_time_chunks(const Call<T>& c, const Runner& runner, int64_t length) {
  const int64_t chunks = (c.steps + length - 1) / length;
  const int64_t lanes = c.lanes;
  T* A = c.scratch;
  T* B = c.scratch + chunks * lanes;
  const bool last_only = c.last_only();
  auto range_of = [&](int64_t k) { return std::pair<int64_t, int64_t>(k * length, k + 1 == chunks ? c.steps : (k + 1) * length); };
  // The last chunk's aggregate is needed only when nothing but the last state is.
  runner.for_each(0, last_only ? chunks : chunks - 1, 1, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      aggregate<op>(A + k * lanes, B + k * lanes, c.x, range_of(k).first, range_of(k).second, lanes);
  });
  const int64_t carried = last_only ? chunks : chunks - 1;
  for (int64_t k = 0; k < carried; ++k) {
    const T* before = k == 0 ? c.init : B + (k - 1) * lanes;
    for (int64_t l = 0; l < lanes; ++l) B[k * lanes + l] = apply<op>(A[k * lanes + l], B[k * lanes + l], before[l]);
  }
  if (last_only) {
    std::memcpy(static_cast<void*>(c.out), B + (chunks - 1) * lanes, size_t(lanes) * sizeof(T));
    return;
  }
  runner.for_each(0, chunks, 1, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      const T* before = k == 0 ? c.init : B + (k - 1) * lanes;
      scan_range<op>(c.out, false, before, c.x, range_of(k).first, range_of(k).second, lanes, c.streams());
    }
  });
}

// A whole call: serial, or chunked where the call allows it and it pays.
template <Op op, class T, class Runner> void run(const Call<T>& c, const Runner& runner) {
  if (c.steps <= 0 || c.lanes <= 0) return;
  if (!c.may_chunk()) return run_serial<op>(c, runner, false);
  const int64_t workers = runner.workers();
  const int64_t forced = runner.forced_grain();
  int64_t length = forced > 0 ? forced : (c.steps + workers * kTimeChunksPerThread - 1) / (workers * kTimeChunksPerThread);
  if (length < c.min_chunk) length = c.min_chunk;
  if ((workers < 2 && forced <= 0) || length >= c.steps) {
    // One thread: one lane runs in vector registers (one pass); more lanes are serial in time,
    // their lane loop already independent work.
    return run_serial<op>(c, CallingThread{}, true);
  }
  run_time_chunks<op>(c, runner, length);
}

template <Op op, class T, class Runner>
void run_call(const Runner& runner, T* out, int64_t out_rows, const T* init, const T* a, int64_t a_step,
              int64_t a_lane, const T* b, int64_t b_step, int64_t b_lane, int64_t steps, int64_t lanes,
              int64_t chunk_min_steps, int64_t chunk_max_lanes, int64_t min_chunk, T* scratch) {
  if (min_chunk < 1) min_chunk = 1;
  const Call<T> call{out, out_rows, init, {a, a_step, a_lane, b, b_step, b_lane}, steps, lanes,
                     chunk_min_steps, chunk_max_lanes, min_chunk, scratch};
  run<op>(call, runner);
}

}  // namespace scan_v1

// The entry points that generated code calls (one per operator; the arguments are described at the
// top of this file).
#define SCANGEN_SCAN_ENTRY(name, op)                                                                          \
  template <class T>                                                                                          \
  inline void name(T* out, int64_t out_rows, const T* init, const T* a, int64_t a_step, int64_t a_lane,       \
                   const T* b, int64_t b_step, int64_t b_lane, int64_t steps, int64_t lanes,                  \
                   int64_t chunk_min_steps, int64_t chunk_max_lanes, int64_t min_chunk, T* scratch) {         \
    scan_v1::run_call<scan_v1::Op::op>(scan_v1::CallingThread{}, out, out_rows, init, a, a_step, a_lane, b,   \
                                       b_step, b_lane, steps, lanes, chunk_min_steps, chunk_max_lanes,        \
                                       min_chunk, scratch);                                                   \
  }
SCANGEN_SCAN_ENTRY(scan_affine, Affine)
SCANGEN_SCAN_ENTRY(scan_add_mul, AddMul)
SCANGEN_SCAN_ENTRY(scan_add, Add)
SCANGEN_SCAN_ENTRY(scan_mul, Mul)
SCANGEN_SCAN_ENTRY(scan_max, Max)
SCANGEN_SCAN_ENTRY(scan_min, Min)
SCANGEN_SCAN_ENTRY(scan_max_new_first, MaxNewFirst)
SCANGEN_SCAN_ENTRY(scan_min_new_first, MinNewFirst)
#undef SCANGEN_SCAN_ENTRY

}  // namespace scangen_rt_v1

#endif  // SCANGEN_CPU_SCAN_V1_H
