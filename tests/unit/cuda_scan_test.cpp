// The associative scans of the CUDA kernels (templates/cuda/scangen_cuda_scan.h) on the CUDA
// emulation: every operator, f32 / f64 / i32 / i64, against a sequential reference written here
// with the scalar functions of the language. Launches of one block, of several blocks, and of
// several blocks that lag behind each other with random delays of threads (the emulation's
// $SCANGEN_CUDA_EMULATION_STAGGER_US and _DELAY_US). Integer, max and min results must have the
// reference's bits on every path, and so must floats on the serial path; chunked float results are
// within 2 T eps m_t of it, where m_t is the recurrence run on absolute values (a bound on the
// rounding error of any association order of T steps). Each chunked case checks that the plan
// did chunk, so the look-back is what is tested.
#include "scangen_abi.h"
#include "scangen_cuda_emulation.h"
// The kernel side, after the emulation, as in an emulated module.
#include "scangen_cuda_abi.h"
#include "scangen_scalar.h"
#include "scangen_cuda_device.h"
#include "scangen_cuda_scan.h"

#define BOOST_TEST_MODULE cuda_scan
#include <boost/test/unit_test.hpp>

#include "codegen/scan_strategy.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scoped_env.h"

namespace {

namespace sg = scangen::scalar_v1;
namespace sgc = scangen_cuda_v1;
namespace sd = scangen_cuda_v1::scan_detail;

enum class Op { Affine, AddMul, Add, Mul, Max, Min, MaxNewFirst, MinNewFirst };
const Op kOps[] = {Op::Affine, Op::AddMul, Op::Add, Op::Mul, Op::Max, Op::Min, Op::MaxNewFirst, Op::MinNewFirst};
const char* name(Op op) {
  static const char* names[] = {"affine", "add_mul", "add", "mul", "max", "min", "max_new_first", "min_new_first"};
  return names[int(op)];
}

// One scan: shapes, layout of the operands and the generator's thresholds.
struct Shape {
  long long lanes = 1, steps = 1;
  bool reverse = false;       // negative step strides, pointers at step 0 (the last row)
  bool a_invariant = false;   // a_step == 0
  bool b_broadcast = false;   // b_lane == 0
  bool b_invariant = false;   // b_step == 0
  bool last_only = false;     // out_rows == 1
  bool chunking = true;       // thresholds that allow chunking (else chunk_min_steps == 0)
  long long min_chunk = 4;
};

// The launch: grid x block emulated threads; `lagging`: later blocks lag at every barrier and
// threads are delayed at random.
struct Grid {
  unsigned grid = 1, block = 16;
  bool lagging = false;
};

template <class T>
struct Problem {
  Shape shape;
  std::vector<T> a, b, init;  // a and b as stored: rows of `lanes` (or 1) elements
  long long a_step = 0, a_lane = 0, b_step = 0, b_lane = 0;
  long long a_base = 0, b_base = 0;  // the index of step 0's row
  long long rows() const { return shape.steps == 0 ? 0 : shape.last_only ? 1 : shape.steps; }
};

template <class T>
T random_value(Op op, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  if constexpr (sg::is_float_v<T>) {
    if (op == Op::Mul) return T(1.0 + 0.1 * unit(rng));
    if (op == Op::Max || op == Op::Min || op == Op::MaxNewFirst || op == Op::MinNewFirst) {
      // Ties, signed zeros and NaNs of several payloads: where operand order shows in the bits.
      const unsigned pick = unsigned(rng() % 16);
      if (pick == 0) return T(0.0);
      if (pick == 1) return T(-0.0);
      if (pick == 2) {
        T nan = std::numeric_limits<T>::quiet_NaN();
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &nan, sizeof(T));
        bytes[0] = (unsigned char)(rng() & 0xFF);  // the payload
        std::memcpy(&nan, bytes, sizeof(T));
        return nan;
      }
      if (pick < 6) return T(0.5);
      return T(std::round(unit(rng) * 8.0));
    }
    return T(unit(rng));
  } else {
    if (op == Op::Max || op == Op::Min || op == Op::MaxNewFirst || op == Op::MinNewFirst) return T(int(rng() % 41) - 20);
    return T(rng());  // add, mul, affine wrap around
  }
}

template <class T>
Problem<T> make_problem(Op op, const Shape& shape, unsigned seed) {
  std::mt19937_64 rng(seed);
  Problem<T> p;
  p.shape = shape;
  const long long a_width = shape.a_invariant ? 1 : shape.steps, b_lanes = shape.b_broadcast ? 1 : shape.lanes;
  p.a.resize(size_t(a_width * shape.lanes + 1));
  p.b.resize(size_t((shape.b_invariant ? 1 : shape.steps) * b_lanes + 1));
  p.init.resize(size_t(shape.lanes));
  for (T& x : p.a) x = random_value<T>(op, rng);
  for (T& x : p.b) x = random_value<T>(op, rng);
  for (T& x : p.init) x = random_value<T>(op, rng);
  const long long sign = shape.reverse ? -1 : 1;
  p.a_lane = 1;
  p.a_step = shape.a_invariant ? 0 : sign * shape.lanes;
  p.a_base = shape.reverse && !shape.a_invariant ? (shape.steps - 1) * shape.lanes : 0;
  p.b_lane = shape.b_broadcast ? 0 : 1;
  p.b_step = shape.b_invariant ? 0 : sign * b_lanes;
  p.b_base = shape.reverse && shape.steps > 0 && !shape.b_invariant ? (shape.steps - 1) * b_lanes : 0;
  return p;
}

// The interpreter's order: for t, for l, the step of the operator.
template <class T>
T reference_step(Op op, T h, T a, T b) {
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

template <class T>
std::vector<T> reference(Op op, const Problem<T>& p, std::vector<double>& scale) {
  const long long lanes = p.shape.lanes, steps = p.shape.steps;
  std::vector<T> h(p.init), rows;
  std::vector<double> m(static_cast<size_t>(lanes));
  for (long long l = 0; l < lanes; ++l) m[size_t(l)] = std::fabs(double(p.init[size_t(l)]));
  for (long long t = 0; t < steps; ++t)
    for (long long l = 0; l < lanes; ++l) {
      const T a = p.a[size_t(p.a_base + t * p.a_step + l * p.a_lane)];
      const T b = p.b[size_t(p.b_base + t * p.b_step + l * p.b_lane)];
      h[size_t(l)] = reference_step(op, h[size_t(l)], a, b);
      double& ml = m[size_t(l)];
      ml = op == Op::Affine   ? std::fabs(double(a)) * ml + std::fabs(double(b))
           : op == Op::AddMul ? std::fabs(double(a)) * (ml + std::fabs(double(b)))
           : op == Op::Mul  ? ml * std::fabs(double(b))
                            : ml + std::fabs(double(b));
      if (!p.shape.last_only || t == steps - 1) {
        rows.push_back(h[size_t(l)]);
        scale.push_back(ml);
      }
    }
  return rows;
}

// What the kernel of the test runs: the helper of `op`, twice on the same scratch (as in an outer
// time loop: the second call meets the first one's flags), into two outputs.
struct Launch {
  Op op;
  long long chunk_min_steps, chunk_max_lanes, min_chunk;
};
const Launch* current_launch = nullptr;
const void* current_problem = nullptr;
void* current_outs[2] = {nullptr, nullptr};
void* current_scratch = nullptr;

template <class T>
void call_helper(sgc::Context& ctx, const Launch& k, const Problem<T>& p, T* out, T* scratch) {
  const T* a = p.a.data() + p.a_base;
  const T* b = p.b.data() + p.b_base;
  const long long rows = p.shape.last_only && p.shape.steps > 0 ? 1 : p.shape.steps;
#define SCAN_TEST_CALL(fn)                                                                                          \
  sgc::fn(ctx, out, rows, p.init.data(), a, p.a_step, p.a_lane, b, p.b_step, p.b_lane, p.shape.steps, p.shape.lanes, \
          k.chunk_min_steps, k.chunk_max_lanes, k.min_chunk, scratch)
  switch (k.op) {
    case Op::Affine: SCAN_TEST_CALL(scan_affine); break;
    case Op::AddMul: SCAN_TEST_CALL(scan_add_mul); break;
    case Op::Add: SCAN_TEST_CALL(scan_add); break;
    case Op::Mul: SCAN_TEST_CALL(scan_mul); break;
    case Op::Max: SCAN_TEST_CALL(scan_max); break;
    case Op::Min: SCAN_TEST_CALL(scan_min); break;
    case Op::MaxNewFirst: SCAN_TEST_CALL(scan_max_new_first); break;
    case Op::MinNewFirst: SCAN_TEST_CALL(scan_min_new_first); break;
  }
#undef SCAN_TEST_CALL
}

template <class T>
void test_kernel(scangen_cuda_launch* launch, scangen_cuda_tensor* tensors) {
  sgc::Context ctx(launch, tensors);
  const Problem<T>& p = *static_cast<const Problem<T>*>(current_problem);
  for (void* out : current_outs) call_helper(ctx, *current_launch, p, static_cast<T*>(out), static_cast<T*>(current_scratch));
}

// Whether the helper's plan chunks this problem on `grid`.
template <class T>
bool plan_chunks(Op op, const Problem<T>& p, const Launch& k, const Grid& grid, const T* scratch) {
  const long long width = (long long)grid.grid * grid.block;
  const long long s = p.shape.steps, l = p.shape.lanes;
  sd::Plan plan{};
  if (op == Op::Affine || op == Op::AddMul)
    plan = sd::plan_scan<sd::Affine<T>>(width, s, l, k.chunk_min_steps, k.chunk_max_lanes, k.min_chunk, scratch);
  else
    plan = sd::plan_scan<sd::AddOp<T>>(width, s, l, k.chunk_min_steps, k.chunk_max_lanes, k.min_chunk, scratch);
  return plan.chunks > 1;
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

template <class T>
void check_case(Op op, const Shape& shape, const Grid& grid, unsigned seed) {
  const Problem<T> p = make_problem<T>(op, shape, seed);
  std::vector<double> scale;
  const std::vector<T> expected = reference(op, p, scale);
  const Launch k = {op, shape.chunking ? 2 : 0, 1LL << 40, shape.min_chunk};
  // The scratch the generator allocates, uncleared (all-ones bytes, as the emulated arena), with a
  // guard after it; null when chunking is off.
  const long long granted = shape.chunking ? 2 * shape.lanes * ((shape.steps + shape.min_chunk - 1) / shape.min_chunk) : 0;
  const long long guard = 64;
  std::vector<T> scratch(size_t(granted + guard));
  std::memset(scratch.data(), 0xFF, scratch.size() * sizeof(T));
  const std::vector<T> guard_before(scratch.end() - guard, scratch.end());
  // Outputs: the rows the helper writes, then a guard it must leave alone.
  const size_t written = expected.size();
  std::vector<T> outs[2];
  for (std::vector<T>& out : outs) out.assign(written + size_t(guard), T(77));
  T* scratch_ptr = shape.chunking ? scratch.data() : nullptr;

  const bool chunked = plan_chunks(op, p, k, grid, scratch_ptr);
  const std::string what = std::string(name(op)) + " lanes=" + std::to_string(shape.lanes) + " steps=" +
                           std::to_string(shape.steps) + (shape.reverse ? " reverse" : "") +
                           (shape.last_only ? " last-only" : "") + (shape.a_invariant ? " a-invariant" : "") +
                           (shape.b_broadcast ? " b-broadcast" : "") + (shape.b_invariant ? " b-invariant" : "") +
                           " grid=" + std::to_string(grid.grid) + "x" +
                           std::to_string(grid.block) + (grid.lagging ? " lagging" : "") + (chunked ? " chunked" : " serial");
  BOOST_TEST_CONTEXT(what) {
    std::vector<unsigned char> record(sizeof(scangen_cuda_launch) + 256, 0);
    auto* launch = reinterpret_cast<scangen_cuda_launch*>(record.data());
    launch->error_key = ~0ull;
    current_launch = &k;
    current_problem = &p;
    current_outs[0] = outs[0].data();
    current_outs[1] = outs[1].data();
    current_scratch = scratch_ptr;
    {
      scangen::testing::ScopedEnv stagger("SCANGEN_CUDA_EMULATION_STAGGER_US",
                                          grid.lagging ? std::optional<std::string>("300") : std::nullopt);
      scangen::testing::ScopedEnv delay("SCANGEN_CUDA_EMULATION_DELAY_US",
                                        grid.lagging ? std::optional<std::string>("20") : std::nullopt);
      scangen_emulation_launch(&test_kernel<T>, grid.grid, grid.block, 0, launch, nullptr);
    }
    const bool exact = !sg::is_float_v<T> || !chunked || (op != Op::Affine && op != Op::AddMul && op != Op::Add && op != Op::Mul);
    const double eps = std::numeric_limits<T>::epsilon();
    for (const std::vector<T>& out : outs) {
      size_t wrong = 0;
      for (size_t i = 0; i < written && wrong < 5; ++i) {
        const bool ok = exact ? same_bits(out[i], expected[i])
                              : std::fabs(double(out[i]) - double(expected[i])) <= 2.0 * double(shape.steps) * eps * scale[i];
        if (!ok) {
          ++wrong;
          BOOST_ERROR("element " << i << ": " << double(out[i]) << ", expected " << double(expected[i]));
        }
      }
      for (size_t i = written; i < out.size(); ++i)
        if (!same_bits(out[i], T(77))) BOOST_FAIL("wrote past its rows, at element " << i);
    }
    BOOST_TEST(std::memcmp(scratch.data() + granted, guard_before.data(), guard * sizeof(T)) == 0, "wrote past the scratch");
  }
}

// Problem sizes of every test: small, long, many lanes, reverse, invariant, broadcast, last-only.
std::vector<Shape> shapes() {
  std::vector<Shape> s;
  auto add = [&](long long lanes, long long steps) {
    Shape x;
    x.lanes = lanes;
    x.steps = steps;
    s.push_back(x);
    return &s.back();
  };
  add(1, 0);
  add(3, 1);
  add(1, 9);
  add(2, 37)->min_chunk = 1;
  add(1, 10000)->min_chunk = 16;
  add(10, 10000)->min_chunk = 32;
  add(7, 333)->last_only = true;
  add(5, 1000)->reverse = true;
  {
    Shape* x = add(4, 1001);
    x->reverse = true;
    x->last_only = true;
    x->a_invariant = true;
  }
  add(6, 500)->b_broadcast = true;
  add(3, 640)->a_invariant = true;
  {
    Shape* x = add(2, 700);
    x->b_invariant = true;
    x->reverse = true;
  }
  add(9, 2000)->chunking = false;
  add(1000, 40);  // lanes beyond the threads: serial
  return s;
}

const Grid kGrids[] = {{1, 16, false}, {3, 8, false}, {3, 8, true}};

template <class T>
void check_type() {
  unsigned seed = 1;
  for (Op op : kOps)
    for (const Shape& shape : shapes())
      for (const Grid& grid : kGrids) check_case<T>(op, shape, grid, seed++);
}

}  // namespace

BOOST_AUTO_TEST_CASE(f32_every_operator_and_shape) { check_type<float>(); }
// The generator counts a chunked scan as worth this many threads per lane (parallel-width).
BOOST_AUTO_TEST_CASE(generator_counts_the_chunks_in_flight) {
  BOOST_TEST(scangen::codegen::kCudaScanChunksPerLane == sd::Limits::kMaxChunksInFlight);
}

BOOST_AUTO_TEST_CASE(f64_every_operator_and_shape) { check_type<double>(); }
BOOST_AUTO_TEST_CASE(i32_every_operator_and_shape) { check_type<int32_t>(); }
BOOST_AUTO_TEST_CASE(i64_every_operator_and_shape) { check_type<int64_t>(); }

// Many lanes chunked: 1000 lanes over 1040 threads, two chunks a lane at most.
BOOST_AUTO_TEST_CASE(many_lanes_chunked_on_a_wide_grid) {
  Shape shape;
  shape.lanes = 1000;
  shape.steps = 24;
  shape.min_chunk = 2;
  const Grid wide = {4, 260, false};
  check_case<float>(Op::Affine, shape, wide, 99);
  check_case<int32_t>(Op::Max, shape, wide, 100);
}

// One lane on 1040 threads: only sd::Limits::kMaxChunksInFlight of them take tiles.
BOOST_AUTO_TEST_CASE(one_lane_on_a_wide_grid) {
  Shape shape;
  shape.lanes = 1;
  shape.steps = 5000;
  shape.min_chunk = 4;
  const Grid wide = {4, 260, false};
  check_case<double>(Op::Affine, shape, wide, 101);
  check_case<int64_t>(Op::MinNewFirst, shape, wide, 102);
  check_case<int32_t>(Op::Affine, shape, wide, 103);
}

// The plan: chunks only where the thresholds allow, never longer than the scratch holds.
BOOST_AUTO_TEST_CASE(plan_follows_the_thresholds_and_the_scratch) {
  float scratch_word = 0;
  const float* s = &scratch_word;
  using Aff = sd::Affine<float>;
  BOOST_TEST(sd::plan_scan<Aff>(64, 1000, 4, 0, 100, 8, s).chunks == 1);    // chunking off
  BOOST_TEST(sd::plan_scan<Aff>(64, 1000, 4, 2000, 100, 8, s).chunks == 1); // too few steps
  BOOST_TEST(sd::plan_scan<Aff>(64, 1000, 200, 2, 100, 8, s).chunks == 1);  // too many lanes
  BOOST_TEST(sd::plan_scan<Aff>(64, 1000, 64, 2, 100, 8, s).chunks == 1);   // lanes >= threads
  BOOST_TEST(sd::plan_scan<Aff>(64, 1000, 4, 2, 100, 8, static_cast<const float*>(nullptr)).chunks == 1);
  const sd::Plan p = sd::plan_scan<Aff>(64, 1000, 4, 2, 100, 8, s);
  // 2 * ceil(1000 / 8) floats = 1000 bytes a lane; a tile takes 3 floats and a flag: 62 tiles at
  // most, so chunks of ceil(1000 / 62) = 17 steps, 59 of them.
  BOOST_TEST(p.chunk_steps == 17);
  BOOST_TEST(p.chunks == 59);
  BOOST_TEST(p.threads == 64);  // every thread: 4 lanes x kMaxChunksInFlight would be more
  BOOST_TEST(sd::plan_scan<Aff>(100000, 1000, 4, 2, 100, 8, s).threads == 4 * sd::Limits::kMaxChunksInFlight);
  const long long tile_bytes = sd::Board<Aff, float>::kBytesPerTile;
  BOOST_TEST(p.chunks * tile_bytes <= 1000);
}
