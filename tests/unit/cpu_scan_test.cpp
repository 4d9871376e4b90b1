// The associative scans of emitted CPU code (templates/cpu/scangen_cpu_scan.h and the parallel_
// forms in scangen_cpu_threads.h) against a plain sequential loop over the scalar functions of
// scangen_scalar.h: every operator, f32 f64 i32 i64, 1 to 10 lanes, 0 to 10^5 steps, per-step,
// invariant and lane-broadcast operands, reverse and strided steps, last state only, 1 to 3
// threads, chunks forced small.
//
// - Serial (chunking not allowed by the call): bit-identical to the plain loop.
// - Chunked: integers (modular arithmetic), max and min bit-identical; float add, mul and affine
//   within the rounding bound below, against a long double reference.
// - Nothing written outside out's rows (or row 0 for the last state only), nor scratch beyond
//   2 * lanes * ceil(steps / min_chunk).
//
// The float bound. The exact state after step t of h = a h + b is the sum over j <= t of
// P(j, t) b_j (plus P(0, t) h_init), P(j, t) the product of a_{j+1} .. a_t. Any association order
// of the chunked scan rounds each term at most 2 (t - j) + C times (a multiply and an add per later
// step it passes, whatever the grouping, plus C roundings of the log-depth parts: the in-register
// scan's log2 W levels, the powers a^(2^k) by squaring, the carries of chunks), so to first order
//   |h_t - exact_t| <= eps * sum_j (2 (t - j) + C) |P(j, t)| |b_j|,   C = 64,
// computed alongside the reference with S_t = |a_t| S_{t-1} + |b_t| and Q_t = |a_t| (Q_{t-1} +
// S_{t-1}): bound_t = eps (2 Q_t + C S_t). Sums are affine with a = 1; a running product's
// relative error is at most (t + C) eps. Both get (2 t + C) denorm_min more for roundings below the
// normal range (long products of factors below 1). The same bound is in docs/performance.md.
#define BOOST_TEST_MODULE cpu_scan
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scangen_cpu_api.h"
#include "scangen_scalar.h"
#include "scangen_cpu_support.h"
#include "scangen_cpu_matmul.h"
#include "scangen_cpu_scan.h"
#include "scangen_cpu_threads.h"

namespace {

namespace rt = scangen_rt_v1;
namespace sv = scangen_rt_v1::scan_v1;
namespace sg = scangen::scalar_v1;
using sv::Op;

constexpr double kLogDepthRoundings = 64;  // C of the bound above
constexpr int kGuard = 16;                 // elements after each buffer that must stay untouched

// A runner over the pool with a chosen thread count and chunk length (the test's own
// SCANGEN_PARALLEL_GRAIN), so that one process tries several.
struct TestRunner {
  int threads;
  int64_t grain;
  int64_t workers() const { return threads; }
  int64_t forced_grain() const { return grain; }
  template <class F> void for_each(int64_t begin, int64_t end, int64_t g, int64_t alignment, F&& body) const {
    rt::parallel_for(threads, begin, end, grain > 0 ? grain : g, grain > 0 ? 1 : alignment, body);
  }
};

// One call's arguments; operands live in `a_data` / `b_data` with the pointer at step 0.
template <class T> struct Case {
  int64_t steps = 0, lanes = 1;
  bool last_only = false;
  std::vector<T> init, a_data, b_data;
  int64_t a_offset = 0, a_step = 0, a_lane = 0, b_offset = 0, b_step = 0, b_lane = 0;
  int64_t chunk_min_steps = 0, chunk_max_lanes = 0, min_chunk = 1;
  const T* a() const { return a_data.data() + a_offset; }
  const T* b() const { return b_data.data() + b_offset; }
  T a_at(int64_t t, int64_t l) const { return a()[t * a_step + l * a_lane]; }
  T b_at(int64_t t, int64_t l) const { return b()[t * b_step + l * b_lane]; }
  int64_t out_rows() const { return last_only ? 1 : steps; }
  int64_t scratch_size() const { return 2 * lanes * ((steps + min_chunk - 1) / min_chunk); }
  bool may_chunk() const { return chunk_min_steps > 0 && steps >= chunk_min_steps && lanes <= chunk_max_lanes; }
  std::string describe() const {
    return "steps " + std::to_string(steps) + " lanes " + std::to_string(lanes) + " a_step " + std::to_string(a_step) +
           " a_lane " + std::to_string(a_lane) + " b_step " + std::to_string(b_step) + " b_lane " +
           std::to_string(b_lane) + (last_only ? " last only" : "") + " chunk_min_steps " +
           std::to_string(chunk_min_steps) + " chunk_max_lanes " + std::to_string(chunk_max_lanes) + " min_chunk " +
           std::to_string(min_chunk);
  }
};

// The step of each operator, written here again from the table of the interface.
template <Op op, class T> T oracle_step(T h, T a, T b) {
  switch (op) {
    case Op::Affine: return sg::add(sg::mul(a, h), b);
    case Op::AddMul: return sg::mul(sg::add(h, b), a);
    case Op::Add: return sg::add(h, b);
    case Op::Mul: return sg::mul(h, b);
    case Op::Max: return sg::max(h, b);
    case Op::Min: return sg::min(h, b);
    case Op::MaxNewFirst: return sg::max(b, h);
    case Op::MinNewFirst: return sg::min(b, h);
  }
  return h;
}

// The plain sequential loop: for t, for l, the step of the operator (the serial path's oracle).
template <Op op, class T> std::vector<T> plain_loop(const Case<T>& c) {
  std::vector<T> h = c.init, out;
  for (int64_t t = 0; t < c.steps; ++t) {
    for (int64_t l = 0; l < c.lanes; ++l) h[size_t(l)] = oracle_step<op>(h[size_t(l)], c.a_at(t, l), c.b_at(t, l));
    if (!c.last_only || t + 1 == c.steps) out.insert(out.end(), h.begin(), h.end());
  }
  return out;
}

// The long double reference of a float scan and its rounding bound (see the top of the file).
template <Op op, class T> void reference(const Case<T>& c, std::vector<long double>& value, std::vector<long double>& bound) {
  const long double eps = std::numeric_limits<T>::epsilon();
  for (int64_t l = 0; l < c.lanes; ++l) {
    long double h = c.init[size_t(l)], s = std::fabs(h), q = 0;
    for (int64_t t = 0; t < c.steps; ++t) {
      const long double a = sv::kUsesA<op> ? c.a_at(t, l) : op == Op::Add ? 1.0L : 0.0L;
      // (h + b) * a is the affine map h -> a h + a b.
      const long double b = op == Op::AddMul ? a * c.b_at(t, l) : c.b_at(t, l);
      if (op == Op::Mul) {
        h = h * b;
      } else {
        h = a * h + b;
        q = std::fabs(a) * (q + s);
        s = std::fabs(a) * s + std::fabs(b);
      }
      const int64_t row = c.last_only ? 0 : t;
      if (c.last_only && t + 1 != c.steps) continue;
      value[size_t(row * c.lanes + l)] = h;
      // Each rounding below the normal range adds at most denorm_min in absolute terms.
      const long double underflow = (2 * t + kLogDepthRoundings) * std::numeric_limits<T>::denorm_min();
      bound[size_t(row * c.lanes + l)] = underflow + (op == Op::Mul ? eps * (t + kLogDepthRoundings) * std::fabs(h)
                                                                    : eps * (2 * q + kLogDepthRoundings * s));
    }
  }
}

template <class T> bool same_bits(T x, T y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// How one case runs: 0 the single-thread entry point; 1-3 threads of a TestRunner with `grain`;
// -1..-3 the public parallel_ entry point with that many threads.
template <Op op, class T> void call(const Case<T>& c, int how, int64_t grain, T* out, T* scratch) {
  const T* a = c.a();
  const T* b = c.b();
  if (how == 0) {
    sv::run_call<op>(sv::CallingThread{}, out, c.out_rows(), c.init.data(), a, c.a_step, c.a_lane, b, c.b_step,
                     c.b_lane, c.steps, c.lanes, c.chunk_min_steps, c.chunk_max_lanes, c.min_chunk, scratch);
  } else if (how > 0) {
    sv::run_call<op>(TestRunner{how, grain}, out, c.out_rows(), c.init.data(), a, c.a_step, c.a_lane, b, c.b_step,
                     c.b_lane, c.steps, c.lanes, c.chunk_min_steps, c.chunk_max_lanes, c.min_chunk, scratch);
  } else {
    sv::run_call<op>(sv::PoolRunner{-how}, out, c.out_rows(), c.init.data(), a, c.a_step, c.a_lane, b, c.b_step,
                     c.b_lane, c.steps, c.lanes, c.chunk_min_steps, c.chunk_max_lanes, c.min_chunk, scratch);
  }
}

// Runs one case every way and checks each result; returns false (after reporting) on the first
// failure.
template <Op op, class T> bool check_case(const Case<T>& c, std::mt19937_64& rng) {
  const std::vector<T> expected = plain_loop<op>(c);
  const int64_t size = c.steps == 0 ? 0 : c.out_rows() * c.lanes;
  std::vector<long double> value(static_cast<size_t>(size)), bound(static_cast<size_t>(size));
  constexpr bool exact = !sg::is_float_v<T> || (!sv::kUsesA<op> && op != Op::Add && op != Op::Mul);
  if (!exact && c.may_chunk()) reference<op>(c, value, bound);
  const T canary = T(77);
  for (int how : {0, 1, 2, 3, -1, -2, -3}) {
    const int64_t grain = std::uniform_int_distribution<int64_t>(0, 3)(rng) == 0 ? -1 : int64_t(1) << (rng() % 14);
    std::vector<T> out(static_cast<size_t>(size + kGuard), canary), scratch(static_cast<size_t>(c.scratch_size() + kGuard), canary);
    call<op>(c, how, grain, out.data(), c.may_chunk() ? scratch.data() : nullptr);
    for (int g = 0; g < kGuard; ++g) {
      if (!same_bits(out[size_t(size + g)], canary) || !same_bits(scratch[size_t(c.scratch_size() + g)], canary)) {
        BOOST_ERROR("written past out or scratch: " << c.describe() << " how " << how);
        return false;
      }
    }
    for (int64_t i = 0; i < size; ++i) {
      const T got = out[size_t(i)], want = expected[size_t(i)];
      bool good;
      if (exact || !c.may_chunk()) {
        good = same_bits(got, want);
      } else {
        good = std::fabs(static_cast<long double>(got) - value[size_t(i)]) <= bound[size_t(i)];
      }
      if (!good) {
        BOOST_ERROR("element " << i << ": got " << got << ", serial " << want << ", reference "
                               << double(value[size_t(i)]) << " within " << double(bound[size_t(i)]) << "; "
                               << c.describe() << " how " << how << " grain " << grain << " a0 " << c.a()[0] << " b0 " << c.b()[0]);
        return false;
      }
    }
  }
  return true;
}

// Operand values: wide integers (wrapping exercised), floats whose scans stay finite, and for
// float max and min the zeros and NaNs of several payloads that their tie rules are about.
template <Op op, class T> T random_value(std::mt19937_64& rng, bool coefficient) {
  if constexpr (sg::is_int_v<T>) {
    if (op == Op::Max || op == Op::Min || op == Op::MaxNewFirst || op == Op::MinNewFirst) {
      if (rng() % 4 == 0) return T(int64_t(rng() % 7) - 3);  // ties
    }
    return T(rng());
  } else {
    std::uniform_real_distribution<double> unit(-1, 1);
    if (op == Op::Mul) return T(1 + 0.01 * unit(rng));
    if (sv::kUsesA<op> && coefficient) return T(unit(rng));
    if (op == Op::Max || op == Op::Min || op == Op::MaxNewFirst || op == Op::MinNewFirst) {
      // Zeros and ones often (ties), NaNs rarely: after a NaN, max and min keep it.
      switch (rng() % 64) {
        case 0: case 1: case 2: case 3: return T(0.0);
        case 4: case 5: case 6: case 7: return T(-0.0);
        case 8: {  // a quiet NaN with a random payload
          T nan = std::numeric_limits<T>::quiet_NaN();
          unsigned char bytes[sizeof(T)];
          std::memcpy(bytes, &nan, sizeof nan);
          bytes[0] = static_cast<unsigned char>(rng());
          std::memcpy(&nan, bytes, sizeof nan);
          return rng() % 2 ? nan : -nan;
        }
        case 9: case 10: case 11: case 12: return T(1);
        default: break;
      }
    }
    return T(unit(rng));
  }
}

// An operand's layout: per step and lane, broadcast over lanes, invariant, reverse, strided.
template <class T>
void make_operand(std::mt19937_64& rng, int64_t steps, int64_t lanes, std::vector<T>& data, int64_t& offset,
                  int64_t& step, int64_t& lane, bool invariant_only, const std::function<T()>& value) {
  const int layout = invariant_only ? 2 + int(rng() % 2) : int(rng() % 6);
  lane = layout == 1 || layout == 3 ? 0 : 1;
  const int64_t per_step = lane ? lanes : 1;
  const int64_t rows = steps > 0 ? steps : 1;
  switch (layout) {
    case 0: case 1: step = per_step; break;             // forward
    case 2: case 3: step = 0; break;                    // invariant
    case 4: step = -per_step; break;                    // reverse
    default: step = 3 * per_step; break;                // strided
  }
  const int64_t span = step == 0 ? per_step : std::abs(step) * (rows - 1) + per_step;
  data.resize(size_t(span));
  for (T& x : data) x = value();
  offset = step < 0 ? span - per_step : 0;
}

template <Op op, class T> void random_cases(int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  constexpr int64_t kSteps[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 100, 257, 1000, 4095, 4097, 20000};
  for (int i = 0; i < count; ++i) {
    Case<T> c;
    c.steps = kSteps[rng() % (sizeof kSteps / sizeof kSteps[0])];
    c.lanes = 1 + int64_t(rng() % 10);
    if (rng() % 2) c.lanes = 1;  // the vectorized-in-time path, half the time
    c.last_only = rng() % 4 == 0;
    auto b_value = [&] { return random_value<op, T>(rng, false); };
    auto a_value = [&] { return random_value<op, T>(rng, true); };
    c.init.resize(size_t(c.lanes));
    for (T& x : c.init) x = op == Op::Mul && sg::is_float_v<T> ? T(1) : b_value();
    make_operand<T>(rng, c.steps, c.lanes, c.b_data, c.b_offset, c.b_step, c.b_lane, false, b_value);
    if (sv::kUsesA<op>) {
      make_operand<T>(rng, c.steps, c.lanes, c.a_data, c.a_offset, c.a_step, c.a_lane, false, a_value);
    } else {  // the generator passes b for the unused operand
      c.a_data = c.b_data, c.a_offset = c.b_offset, c.a_step = c.b_step, c.a_lane = c.b_lane;
    }
    // The thresholds: chunking off, at its limits, or just beyond them.
    switch (rng() % 5) {
      case 0: c.chunk_min_steps = 0; break;
      case 1: c.chunk_min_steps = c.steps; break;
      case 2: c.chunk_min_steps = c.steps + 1; break;
      default: c.chunk_min_steps = 1 + int64_t(rng() % 64); break;
    }
    c.chunk_max_lanes = rng() % 6 == 0 ? c.lanes - 1 : c.lanes + int64_t(rng() % 4);
    constexpr int64_t kMinChunks[] = {1, 2, 3, 16, 64, 1000, 4096};
    c.min_chunk = kMinChunks[rng() % (sizeof kMinChunks / sizeof kMinChunks[0])];
    if (!check_case<op>(c, rng)) return;
  }
}

template <class T> void all_operators(int count, unsigned seed) {
  random_cases<Op::Affine, T>(count, seed);
  random_cases<Op::AddMul, T>(count, seed + 7);
  random_cases<Op::Add, T>(count, seed + 1);
  random_cases<Op::Mul, T>(count, seed + 2);
  random_cases<Op::Max, T>(count, seed + 3);
  random_cases<Op::Min, T>(count, seed + 4);
  random_cases<Op::MaxNewFirst, T>(count, seed + 5);
  random_cases<Op::MinNewFirst, T>(count, seed + 6);
}

BOOST_AUTO_TEST_CASE(f32_every_operator) { all_operators<float>(120, 100); }
BOOST_AUTO_TEST_CASE(f64_every_operator) { all_operators<double>(120, 200); }
BOOST_AUTO_TEST_CASE(i32_every_operator) { all_operators<int32_t>(120, 300); }
BOOST_AUTO_TEST_CASE(i64_every_operator) { all_operators<int64_t>(120, 400); }

// One long channel, 10^5 steps, chunked on several threads: the headline case of the issue, with
// invariant and per-step coefficients, forward and reverse.
BOOST_AUTO_TEST_CASE(long_affine_channel) {
  std::mt19937_64 rng(7);
  for (bool per_step : {false, true})
    for (bool reverse : {false, true}) {
      Case<float> c;
      c.steps = 100000;
      c.init = {0.25f};
      const int64_t n = per_step ? c.steps : 1;
      std::uniform_real_distribution<float> decay(0.9f, 1.0f), unit(-1, 1);
      for (int64_t i = 0; i < n; ++i) c.a_data.push_back(decay(rng));
      for (int64_t i = 0; i < c.steps; ++i) c.b_data.push_back(unit(rng));
      c.a_step = per_step ? (reverse ? -1 : 1) : 0;
      c.a_offset = per_step && reverse ? n - 1 : 0;
      c.b_step = reverse ? -1 : 1;
      c.b_offset = reverse ? c.steps - 1 : 0;
      c.chunk_min_steps = 1, c.chunk_max_lanes = 1, c.min_chunk = 1000;
      BOOST_TEST((check_case<Op::Affine>(c, rng)));
    }
}

// Results larger than kStreamBytes go to memory with non-temporal stores (one channel, chunking
// allowed; one thread or chunks on several): the same values as cached stores, visible to the
// caller.
BOOST_AUTO_TEST_CASE(long_results_are_streamed) {
  std::mt19937_64 rng(11);
  Case<float> c;
  c.steps = 2 * sv::kStreamBytes / int64_t(sizeof(float)) + 37;
  c.init = {-0.5f};
  c.a_data = {0.75f};
  std::uniform_real_distribution<float> unit(-1, 1);
  for (int64_t i = 0; i < c.steps; ++i) c.b_data.push_back(unit(rng));
  c.b_step = 1;
  c.chunk_min_steps = 1, c.chunk_max_lanes = 1, c.min_chunk = 1000;
  BOOST_TEST((check_case<Op::Affine>(c, rng)));
}

// The serial path is the plain loop, bit for bit, also when it is not the chunked path's choice
// but the call's (chunk_min_steps = 0), for an operator whose float results would differ if it
// reassociated.
BOOST_AUTO_TEST_CASE(serial_path_is_the_plain_loop) {
  const int64_t steps = 5000;
  std::vector<float> b(static_cast<size_t>(steps)), out(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) b[size_t(t)] = std::sin(float(t)) * 1000;
  const float a = 0.999f, init = 1;
  for (int threads : {1, 2}) {
    rt::parallel_scan_affine<float>(threads, out.data(), steps, &init, &a, 0, 0, b.data(), 1, 0, steps, 1, 0, 0, 1,
                                    nullptr);
    float h = init;
    for (int64_t t = 0; t < steps; ++t) {
      h = a * h + b[size_t(t)];
      if (!same_bits(out[size_t(t)], h)) BOOST_FAIL("step " << t << " differs from the plain loop");
    }
  }
}

// Max and min over zeros and NaNs: which zero and which NaN wins follows the operand order of the
// callee, chunked or not.
BOOST_AUTO_TEST_CASE(zeros_and_nans_follow_the_operand_order) {
  const float nan1 = std::nanf("1"), nan2 = std::nanf("2");
  const std::vector<float> b = {-0.0f, 0.0f, -0.0f, nan1, 1.0f, nan2, 0.0f};
  const float init = 0.0f;
  std::vector<float> out(b.size()), scratch(2 * b.size());
  const int64_t n = int64_t(b.size());
  auto last = [&](auto scan) {
    scan(out.data(), n, &init, b.data(), 0, 0, b.data(), 1, 0, n, 1, 1, 1, 1, scratch.data());
    return out;
  };
  std::vector<float> r = last([](auto... args) { rt::scan_max<float>(args...); });
  BOOST_TEST(std::signbit(r[0]) == false);  // max(+0, -0): the state, the first operand, wins
  BOOST_TEST(same_bits(r[3], nan1));
  BOOST_TEST(same_bits(r[6], nan1));  // the first NaN stays
  r = last([](auto... args) { rt::scan_max_new_first<float>(args...); });
  BOOST_TEST(std::signbit(r[0]) == true);  // max(-0, +0): the new operand wins
  BOOST_TEST(same_bits(r[5], nan2));       // the newest NaN wins
  r = last([](auto... args) { rt::scan_min<float>(args...); });
  BOOST_TEST(std::signbit(r[2]) == false);
  r = last([](auto... args) { rt::scan_min_new_first<float>(args...); });
  BOOST_TEST(std::signbit(r[2]) == true);
}

}  // namespace
