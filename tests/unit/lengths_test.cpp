// Scans with `lengths = L` and `offsets = O` (language.md, "Variable-length batches") against
// the meaning the contract gives them: row b of a batched scan is the plain scan of row b's own
// L[b] steps, bit for bit, on every backend that runs without a GPU and at -O0 and -O2. After its
// end, a row's states keep their last value and its per-step outputs are 0. Random batches (zero
// lengths, full rows, one row), forward with past and future taps and a two-lag state, and
// reverse. A packed batch gives the rows of the padded one, whatever the padding holds.
#define BOOST_TEST_MODULE lengths
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/batch_rows.h"
#include "scangen/scangen.h"

using namespace scangen;
using namespace scangen::testing;

namespace {

const char* const kProgram = R"(
fn batched(x: f32[T, B, I], h0: f32[B, H], g0: f32[2, B, H], W: f32[I, H], U: f32[H, H], L: i64[B]) -> (f32[?, B, H], f32[?, B, H], f32[?, B, H]) {
    let (h, g, y) = scan(lengths = L) {
        init h = h0
        init g = g0
        h[t] = tanh(x[t] @ W + x[t + 1] @ W * 0.5 + h[t-1] @ U)
        g[t] = g[t-2] * 0.5 + h[t]
        y[t] = h[t] + g[t-1]
    }
    return (h, g, y)
}

fn plain(x: f32[T, B, I], h0: f32[B, H], g0: f32[2, B, H], W: f32[I, H], U: f32[H, H]) -> (f32[?, B, H], f32[?, B, H], f32[?, B, H]) {
    let (h, g, y) = scan {
        init h = h0
        init g = g0
        h[t] = tanh(x[t] @ W + x[t + 1] @ W * 0.5 + h[t-1] @ U)
        g[t] = g[t-2] * 0.5 + h[t]
        y[t] = h[t] + g[t-1]
    }
    return (h, g, y)
}

fn batched_reverse(x: f32[T, B, I], h0: f32[B, H], W: f32[I, H], U: f32[H, H], L: i32[B]) -> (f32[?, B, H], f32[?, B, H]) {
    let (h, y) = scan(lengths = L, reverse) {
        init h = h0
        h[t] = tanh(x[t] @ W + x[t - 1] @ W * 0.5 + h[t-1] @ U)
        y[t] = h[t] * 2.0 + x[t][:, 0:1]
    }
    return (h, y)
}

fn packed(x: f32[N, I], h0: f32[B, H], W: f32[I, H], U: f32[H, H], O: i64[P], back: bool) -> (f32[?, B, H], f32[N, H]) {
    let (h, y) = scan(offsets = O) {
        init h = h0
        h[t] = tanh(x[t] @ W + h[t-1] @ U)
        y[t] = h[t] * 2.0
    }
    let (hr, yr) = scan(offsets = O, reverse) {
        init hr = h0
        hr[t] = tanh(x[t] @ W + hr[t-1] @ U)
        yr[t] = hr[t] * 2.0
    }
    return (back ? hr : h, back ? yr : y)
}

fn padded(x: f32[T, B, I], h0: f32[B, H], W: f32[I, H], U: f32[H, H], L: i64[B], back: bool) -> (f32[?, B, H], f32[?, B, H]) {
    let (h, y) = scan(lengths = L) {
        init h = h0
        h[t] = tanh(x[t] @ W + h[t-1] @ U)
        y[t] = h[t] * 2.0
    }
    let (hr, yr) = scan(lengths = L, reverse) {
        init hr = h0
        hr[t] = tanh(x[t] @ W + hr[t-1] @ U)
        yr[t] = hr[t] * 2.0
    }
    return (back ? hr : h, back ? yr : y)
}

fn plain_reverse(x: f32[T, B, I], h0: f32[B, H], W: f32[I, H], U: f32[H, H]) -> (f32[?, B, H], f32[?, B, H]) {
    let (h, y) = scan(reverse) {
        init h = h0
        h[t] = tanh(x[t] @ W + x[t - 1] @ W * 0.5 + h[t-1] @ U)
        y[t] = h[t] * 2.0 + x[t][:, 0:1]
    }
    return (h, y)
}
)";

constexpr int64_t kI = 3, kH = 2;

struct Case {
  int64_t steps, batch;
  std::vector<int64_t> lengths;
};

Case random_case(std::mt19937& rng) {
  Case c;
  c.steps = std::uniform_int_distribution<int64_t>(0, 5)(rng);
  c.batch = std::uniform_int_distribution<int64_t>(1, 4)(rng);
  int shape = std::uniform_int_distribution<int>(0, 3)(rng);  // 0: random, 1: all full, 2: all empty
  for (int64_t b = 0; b < c.batch; ++b)
    c.lengths.push_back(shape == 1 ? c.steps : shape == 2 ? 0 : std::uniform_int_distribution<int64_t>(0, c.steps)(rng));
  return c;
}

// A state's row after the steps of `b`: its last row, else the init's latest row.
void check_state(const HostTensor& batched, const HostTensor& plain, const std::vector<float>& init, int64_t b,
                 int64_t length) {
  std::vector<float> last = length > 0 ? at(plain, length - 1, 0) : init;
  for (int64_t t = 0; t < batched.dim(0); ++t)
    BOOST_TEST(same_bits(at(batched, t, b), t < length ? at(plain, t, 0) : last), "step " << t << " row " << b);
}

void check_output(const HostTensor& batched, const HostTensor& plain, int64_t b, int64_t length) {
  for (int64_t t = 0; t < batched.dim(0); ++t)
    BOOST_TEST(same_bits(at(batched, t, b), t < length ? at(plain, t, 0) : std::vector<float>(size_t(kH), 0.0f)),
               "step " << t << " row " << b);
}

void forward_batches(const Module& m, std::mt19937& rng) {
  for (int n = 0; n < 12; ++n) {
    Case c = random_case(rng);
    // A future tap: x has one row more than the steps.
    HostTensor x = random_f32(rng, {c.steps + 1, c.batch, kI}), h0 = random_f32(rng, {c.batch, kH}),
               g0 = random_f32(rng, {2, c.batch, kH}), W = random_f32(rng, {kI, kH}), U = random_f32(rng, {kH, kH});
    std::vector<HostTensor> r =
        m.call("batched", {x, h0, g0, W, U, HostTensor::from_vector<int64_t>(c.lengths, {c.batch})});
    BOOST_TEST_CONTEXT("steps " << c.steps << " batch " << c.batch) {
      for (int64_t b = 0; b < c.batch; ++b) {
        int64_t length = c.lengths[size_t(b)];
        HostTensor g0_b = row_of(g0, 1, b, 2);
        std::vector<HostTensor> p = m.call("plain", {row_of(x, 1, b, length + 1), row_of(h0, 0, b, 1), g0_b, W, U});
        check_state(r[0], p[0], row(h0, b), b, length);
        check_state(r[1], p[1], at(g0, 1, b), b, length);
        check_output(r[2], p[2], b, length);
      }
    }
  }
}

void reverse_batches(const Module& m, std::mt19937& rng) {
  for (int n = 0; n < 12; ++n) {
    Case c = random_case(rng);
    // A past tap: x has one row more than the steps; row b reads its own L[b] + 1 elements.
    HostTensor x = random_f32(rng, {c.steps + 1, c.batch, kI}), h0 = random_f32(rng, {c.batch, kH}),
               W = random_f32(rng, {kI, kH}), U = random_f32(rng, {kH, kH});
    std::vector<int32_t> lengths(c.lengths.begin(), c.lengths.end());
    std::vector<HostTensor> r = m.call("batched_reverse", {x, h0, W, U, HostTensor::from_vector<int32_t>(lengths, {c.batch})});
    BOOST_TEST_CONTEXT("steps " << c.steps << " batch " << c.batch) {
      for (int64_t b = 0; b < c.batch; ++b) {
        int64_t length = c.lengths[size_t(b)];
        std::vector<HostTensor> p = m.call("plain_reverse", {row_of(x, 1, b, length + 1), row_of(h0, 0, b, 1), W, U});
        check_state(r[0], p[0], row(h0, b), b, length);
        check_output(r[1], p[1], b, length);
      }
    }
  }
}

// The same batch packed (random lengths, rows one sequence after another) and padded (to the
// longest, with random values in the padding): the same states, and each packed output row is its
// padded step.
void packed_batches(const Module& m, std::mt19937& rng) {
  for (int n = 0; n < 12; ++n) {
    Case c = random_case(rng);
    int64_t longest = 0, rows = 0;
    std::vector<int64_t> offsets{0};
    for (int64_t length : c.lengths) {
      longest = std::max(longest, length);
      offsets.push_back(rows += length);
    }
    HostTensor padded = random_f32(rng, {longest, c.batch, kI}), packed(DType::F32, {rows, kI});
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t t = 0; t < c.lengths[size_t(b)]; ++t)
        std::memcpy(packed.data<float>() + (offsets[size_t(b)] + t) * kI, padded.data<float>() + (t * c.batch + b) * kI,
                    kI * sizeof(float));
    HostTensor h0 = random_f32(rng, {c.batch, kH}), W = random_f32(rng, {kI, kH}), U = random_f32(rng, {kH, kH});
    for (bool back : {false, true}) {
      std::vector<HostTensor> p = m.call("packed", {packed, h0, W, U, HostTensor::from_vector<int64_t>(offsets, {c.batch + 1}),
                                                    HostTensor::scalar<bool>(back)});
      std::vector<HostTensor> q = m.call("padded", {padded, h0, W, U, HostTensor::from_vector<int64_t>(c.lengths, {c.batch}),
                                                    HostTensor::scalar<bool>(back)});
      BOOST_TEST_CONTEXT("batch " << c.batch << (back ? " reverse" : "")) {
        BOOST_TEST(identical(p[0], q[0]));
        BOOST_TEST(p[1].dim(0) == rows);
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t t = 0; t < c.lengths[size_t(b)]; ++t) {
            std::vector<float> got(p[1].data<float>() + (offsets[size_t(b)] + t) * kH,
                                   p[1].data<float>() + (offsets[size_t(b)] + t + 1) * kH);
            BOOST_TEST(same_bits(got, at(q[1], t, b)), "step " << t << " row " << b);
          }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_row_is_its_own_plain_scan) {
  std::mt19937 rng(29);
  for (Backend backend : {Backend::Interpreter, Backend::Cpu, Backend::CudaEmulation})
    for (int level : {0, 2}) {
      BOOST_TEST_CONTEXT(backend_name(backend) << " -O" << level) {
        JitOptions options;
        options.backend = backend;
        options.opt_level = level;
        Module m = compile_source("lengths.scan", kProgram, options);
        forward_batches(m, rng);
        reverse_batches(m, rng);
        packed_batches(m, rng);
      }
    }
}

BOOST_AUTO_TEST_CASE(lengths_beyond_the_steps_are_errors) {
  Module m = compile_source("lengths.scan", kProgram, JitOptions{});
  std::mt19937 rng(1);
  HostTensor x = random_f32(rng, {3, 2, kI}), h0 = random_f32(rng, {2, kH}), g0 = random_f32(rng, {2, 2, kH}),
             W = random_f32(rng, {kI, kH}), U = random_f32(rng, {kH, kH});
  for (std::vector<int64_t> bad : {std::vector<int64_t>{1, 3}, std::vector<int64_t>{-1, 0}}) {
    std::string message;
    try {
      m.call("batched", {x, h0, g0, W, U, HostTensor::from_vector<int64_t>(bad, {2})});
    } catch (const ProgramError& e) {
      message = e.what();
    }
    std::string b = bad[0] == 1 ? "1" : "0", v = bad[0] == 1 ? "3" : "-1";
    BOOST_TEST(message.find("lengths[" + b + "] is " + v + "; it must lie in 0..2, the scan's number of steps") !=
               std::string::npos, message);
  }
}
