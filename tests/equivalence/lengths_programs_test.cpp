// Random programs over variable-length batches (issue 29): random scans with `lengths = L` (past
// and future taps of one or two sequences, one to three states of one or two lags, per-step
// outputs, forward or reverse) and random batches (zero lengths, full rows, one row). Each row of
// the batched scan must be, bit for bit, the plain scan of that row's own L[b] steps written
// without `lengths` (the contract's definition), on the interpreter, the CPU backend and the CUDA
// emulation at -O0 and -O2 (tests/unit/lengths_test.cpp holds packed batches to padded ones).
// The padding is hostile (issue 37): where a row has ended, its sequences hold 0 under log, sqrt
// and 1/z, 100 under exp and 1e30 under products, which the steps of every other program use; a
// step not taken is not evaluated, so no value, error or derivative of it may show: the gradients
// of a loss over the batch (3 programs in CI, every other one in the long run) with respect to a
// shared weight must be the sum of the rows' own, and with respect to the sequences each row's
// own, 0 on the padding.
// All programs of a run share one .scan text, compiled once per backend and level.
//   SCANGEN_LENGTHS_PROGRAMS (default 20 in CI, 200 in tests/run_long.sh), SCANGEN_LENGTHS_SEED,
//   SCANGEN_LENGTHS_GRADIENTS (programs whose gradients are checked: 3 in CI, all in the long run).
#define BOOST_TEST_MODULE lengths_programs
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_scope.h"
#include "common/batch_rows.h"
#include "scangen/scangen.h"

using namespace scangen;
using namespace scangen::testing;

namespace {

constexpr int64_t kI = 2, kH = 2;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

// One random program: its batched and plain functions and what a run needs to know.
struct Program {
  int id = 0;
  bool reverse = false;
  int sequences = 1;
  std::vector<int> taps;          // of every sequence (the same set)
  std::vector<int> state_lags;    // the largest lag of each state (1 or 2)
  int outputs = 0;
  bool hazards = false;           // steps read log, sqrt, 1/z of z and exp of e
  bool gradients = false;         // and their gradients are checked too
  std::string batched, plain, batched_grad, plain_grad;
  int span() const {
    int lo = std::min(0, taps.front()), hi = std::max(0, taps.back());
    return hi - lo;
  }
};

std::string pick(std::mt19937& rng, const std::vector<std::string>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

std::string tap(const std::string& name, int k) {
  return name + "[t" + (k > 0 ? " + " + std::to_string(k) : k < 0 ? " - " + std::to_string(-k) : "") + "]";
}

// A step expression [B, H] from the sequences' taps, the states' past steps and the weights.
std::string step_expr(std::mt19937& rng, const Program& p, int depth) {
  std::vector<std::string> terms;
  for (int s = 0; s < p.sequences; ++s)
    for (int k : p.taps) terms.push_back(tap("x" + std::to_string(s), k) + " @ W" + std::to_string(s));
  for (size_t i = 0; i < p.state_lags.size(); ++i)
    for (int k = 1; k <= p.state_lags[i]; ++k) terms.push_back(tap("s" + std::to_string(i), -k));
  std::string e = pick(rng, terms);
  int more = std::uniform_int_distribution<int>(1, depth)(rng);
  for (int i = 0; i < more; ++i) {
    std::string op = pick(rng, {" + ", " - ", " * "});
    std::string rhs = pick(rng, terms);
    if (rng() % 4 == 0) rhs = "(" + rhs + " @ U)";
    e = "(" + e + op + rhs + ")";
  }
  return e;
}

// The body and signature parts shared by the function variants.
void write_program(std::mt19937& rng, Program& p) {
  p.reverse = rng() % 3 == 0;
  p.sequences = 1 + int(rng() % 2);
  std::vector<int> pool = {0, 0, -1, 1, -2, 2};
  int ntaps = 1 + int(rng() % 2);
  while (int(p.taps.size()) < ntaps) {
    int k = pool[rng() % pool.size()];
    if (std::find(p.taps.begin(), p.taps.end(), k) == p.taps.end()) p.taps.push_back(k);
  }
  std::sort(p.taps.begin(), p.taps.end());
  int states = 1 + int(rng() % 3);
  for (int i = 0; i < states; ++i) p.state_lags.push_back(1 + int(rng() % 2));
  p.outputs = int(rng() % 2);
  std::ostringstream body, results, types, params;
  for (int s = 0; s < p.sequences; ++s) params << "x" << s << ": f32[T, B, I], W" << s << ": f32[I, H], ";
  for (size_t i = 0; i < p.state_lags.size(); ++i)
    params << "h" << i << ": f32[" << (p.state_lags[i] > 1 ? "2, " : "") << "B, H], ";
  params << "U: f32[H, H]";
  std::string names;
  // Every tap of every sequence and each state's largest lag are read (they decide the steps and
  // the inits' shapes): the first state reads all taps, each state its largest lag.
  std::string all_taps;
  for (int s = 0; s < p.sequences; ++s)
    for (int k : p.taps) all_taps += " + " + tap("x" + std::to_string(s), k) + " @ W" + std::to_string(s) + " * 0.25";
  p.hazards = p.id % 2 == 1;
  if (p.hazards) params << ", z: f32[S, B, H], e: f32[S, B, H]";
  // Finite on real rows (z in 0.5..2, e in -1..1), not on padding.
  // Times a value of U, so that the derivative of the padding would reach U's gradient too.
  const std::string hazards =
      p.hazards ? " + (log(z[t]) + sqrt(z[t]) + 1 / z[t] + exp(e[t])) * (s0[t - 1] @ U) * 0.0625" : "";
  std::string loss;
  for (size_t i = 0; i < p.state_lags.size(); ++i) {
    body << "        init s" << i << " = h" << i << "\n";
    body << "        s" << i << "[t] = tanh(" << step_expr(rng, p, 3) << (i == 0 ? all_taps + hazards : "") << " + "
         << tap("s" + std::to_string(i), -p.state_lags[i]) << " * 0.5)\n";
    names += (names.empty() ? "" : ", ") + ("s" + std::to_string(i));
    loss += (loss.empty() ? "" : " + ") + ("sum(s" + std::to_string(i) + "[-1])");
  }
  for (int o = 0; o < p.outputs; ++o) {
    body << "        y" << o << "[t] = " << step_expr(rng, p, 2) << " * 0.5\n";
    names += ", y" + std::to_string(o);
    loss += " + sum(y" + std::to_string(o) + ")";
  }
  size_t count = p.state_lags.size() + size_t(p.outputs);
  std::string type_list;
  for (size_t i = 0; i < count; ++i) type_list += (i ? ", " : "") + std::string("f32[?, B, H]");
  auto function = [&](const std::string& name, const std::string& option, const std::string& extra) {
    std::ostringstream f;
    f << "fn " << name << p.id << "(" << params.str() << extra << ") -> (" << type_list << ") {\n";
    f << "    let (" << names << ") = scan" << option << " {\n" << body.str() << "    }\n";
    f << "    return (" << names << ")\n}\n";
    return f.str();
  };
  // The gradient of the loss (each row's last states, its outputs) with respect to U, z and e.
  auto gradient = [&](const std::string& name, const std::string& option, const std::string& extra) {
    std::ostringstream f;
    f << "fn " << name << p.id << "(" << params.str() << extra << ") -> (f32[H, H], f32[S, B, H], f32[S, B, H]) {\n";
    f << "    let (" << names << ") = scan" << option << " {\n" << body.str() << "    }\n";
    f << "    let (gU, gz, ge) = grad(" << loss << ", (U, z, e))\n";
    f << "    return (gU, gz, ge)\n}\n";
    return f.str();
  };
  const std::string batched = "(lengths = L" + std::string(p.reverse ? ", reverse" : "") + ")";
  const std::string plain = p.reverse ? "(reverse)" : "";
  p.batched = function("batched", batched, ", L: i64[B]");
  p.plain = function("plain", plain, "");
  // The gradients' emitted code is large: a few programs in CI (their compilation is most of the
  // test's time), every one with hazards in the long run.
  p.gradients = p.hazards && p.id / 2 < env_int("SCANGEN_LENGTHS_GRADIENTS", testing::ci_or_long(3, 1000));
  if (p.gradients) {
    p.batched_grad = gradient("batched_grad", batched, ", L: i64[B]");
    p.plain_grad = gradient("plain_grad", plain, "");
  }
}

// One module for all programs.
std::string program_text(const std::vector<Program>& programs) {
  std::string text;
  for (const Program& p : programs) text += p.batched + "\n" + p.plain + "\n" + p.batched_grad + p.plain_grad;
  return text;
}

// A gradient of the batch against its rows' (summed in another order): finite and close.
bool near(double got, double want) { return std::isfinite(got) && std::abs(got - want) <= 1e-4 * (1 + std::abs(want)); }

// Fills the padding of a sequence [rows, B, ...] with `value`: the rows of column b from
// lengths[b] + span on, which no real step reads.
void pad(HostTensor& x, const std::vector<int64_t>& lengths, int span, float value) {
  const int64_t inner = x.dim(0) == 0 ? 0 : x.numel() / (x.dim(0) * x.dim(1));
  for (int64_t t = 0; t < x.dim(0); ++t)
    for (int64_t b = 0; b < x.dim(1); ++b)
      if (t >= lengths[size_t(b)] + span)
        std::fill_n(x.data<float>() + (t * x.dim(1) + b) * inner, inner, value);
}

// Runs program p on a random batch and checks every row against its plain scan and the batch's
// gradient against the sum of the rows'.
// `padded`: a batch of at least 2 steps and 2 rows with padding in it and a row of at least one
// step; else any batch (no steps, all rows full or empty, one row).
void check_program(const Module& m, const Program& p, std::mt19937& rng, bool padded) {
  auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t steps = draw(padded ? 2 : 0, 4), batch = draw(padded ? 2 : 1, 3);
  std::vector<int64_t> lengths;
  int shape = padded ? 0 : int(rng() % 4);  // 0, 1: random; 2: all full; 3: all empty
  for (int64_t b = 0; b < batch; ++b)
    lengths.push_back(shape == 2 ? steps : shape == 3 ? 0 : draw(0, padded ? steps - 1 : steps));
  if (padded) lengths[size_t(draw(0, batch - 1))] = draw(1, steps);
  std::vector<HostTensor> xs, ws, hs;
  for (int s = 0; s < p.sequences; ++s) {
    xs.push_back(random_f32(rng, {steps + p.span(), batch, kI}, 1));
    ws.push_back(random_f32(rng, {kI, kH}, 1));
    pad(xs.back(), lengths, p.span(), 1e30f);
  }
  HostTensor z = random_f32(rng, {steps, batch, kH}, 0.75f), e = random_f32(rng, {steps, batch, kH}, 1);
  for (int64_t i = 0; i < z.numel(); ++i) z.data<float>()[i] += 1.25f;
  pad(z, lengths, 0, 0.0f);
  pad(e, lengths, 0, 100.0f);
  for (int lag : p.state_lags) hs.push_back(random_f32(rng, lag > 1 ? Shape{2, batch, kH} : Shape{batch, kH}, 1));
  HostTensor U = random_f32(rng, {kH, kH}, 0.5f);
  auto args = [&](auto&& sequence, auto&& init) {
    std::vector<HostTensor> a;
    for (int s = 0; s < p.sequences; ++s) {
      a.push_back(sequence(xs[size_t(s)], p.span()));
      a.push_back(ws[size_t(s)]);
    }
    for (size_t i = 0; i < hs.size(); ++i) a.push_back(init(hs[i], p.state_lags[i]));
    a.push_back(U);
    if (p.hazards) {
      a.push_back(sequence(z, 0));
      a.push_back(sequence(e, 0));
    }
    return a;
  };
  std::vector<HostTensor> batched_args =
      args([](const HostTensor& x, int) { return x; }, [](const HostTensor& h, int) { return h; });
  batched_args.push_back(HostTensor::from_vector<int64_t>(lengths, {batch}));
  std::vector<HostTensor> r = m.call("batched" + std::to_string(p.id), batched_args);
  // Only a batch whose every length is 0 has no real step to compute the others on (language.md,
  // decision 23): its gradient may still see the padding. (With 0 steps the loss has no last state.)
  const bool gradients = p.gradients && *std::max_element(lengths.begin(), lengths.end()) > 0;
  std::vector<HostTensor> g = gradients ? m.call("batched_grad" + std::to_string(p.id), batched_args)
                                        : std::vector<HostTensor>();
  std::vector<double> rows_gU(gradients ? size_t(g[0].numel()) : 0, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t length = lengths[size_t(b)];
    auto row_args = args([&](const HostTensor& x, int span) { return row_of(x, 1, b, length + span); },
                         [&](const HostTensor& h, int lag) { return lag > 1 ? row_of(h, 1, b, 2) : row_of(h, 0, b, 1); });
    // The plain scan of an empty row has no last state; that row adds nothing to the gradient,
    // and its sequence rows get 0. A row's z and e gradients are its own; U's sums the rows'.
    if (gradients) {
      std::vector<HostTensor> q;
      if (length > 0) q = m.call("plain_grad" + std::to_string(p.id), row_args);
      for (int64_t i = 0; length > 0 && i < q[0].numel(); ++i) rows_gU[size_t(i)] += q[0].data<float>()[i];
      for (size_t k : {size_t(1), size_t(2)})
        for (int64_t t = 0; t < steps; ++t) {
          std::vector<float> got = at(g[k], t, b), want(size_t(kH), 0.0f);
          if (t < length) want = at(q[k], t, 0);
          for (size_t h = 0; h < want.size(); ++h)
            BOOST_TEST(near(got[h], want[h]), "program " << p.id << " gradient of " << (k == 1 ? "z" : "e") << " step "
                                                         << t << " row " << b << ": " << got[h] << ", its row's "
                                                         << want[h] << "\n" << p.batched_grad);
        }
    }
    std::vector<HostTensor> q = m.call("plain" + std::to_string(p.id), row_args);
    for (size_t i = 0; i < r.size(); ++i) {
      bool state = i < p.state_lags.size();
      std::vector<float> held;
      if (state) {
        const HostTensor& h = hs[i];
        held = length > 0 ? at(q[i], length - 1, 0)
                          : (p.state_lags[i] > 1 ? at(h, 1, b) : row(h, b));
      } else {
        held.assign(size_t(kH), 0.0f);
      }
      for (int64_t t = 0; t < r[i].dim(0); ++t)
        BOOST_TEST(same_bits(at(r[i], t, b), t < length ? at(q[i], t, 0) : held),
                   "program " << p.id << " result " << i << " step " << t << " row " << b << "\n" << p.batched);
    }
  }
  for (size_t i = 0; i < rows_gU.size(); ++i)
    BOOST_TEST(near(g[0].data<float>()[i], rows_gU[i]), "program " << p.id << " gradient of U element " << i << ": "
                                                                    << g[0].data<float>()[i] << ", the rows' sum "
                                                                    << rows_gU[i] << "\n" << p.batched_grad);
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_row_is_its_own_plain_scan) {
  const int64_t count = env_int("SCANGEN_LENGTHS_PROGRAMS", testing::ci_or_long(20, 200));
  std::mt19937 rng(uint32_t(env_int("SCANGEN_LENGTHS_SEED", 29)));
  std::vector<Program> programs(static_cast<size_t>(count));
  for (size_t i = 0; i < programs.size(); ++i) {
    programs[i].id = int(i);
    write_program(rng, programs[i]);
  }
  const std::string text = program_text(programs);
  for (Backend backend : {Backend::Interpreter, Backend::Cpu, Backend::CudaEmulation})
    for (int level : {0, 2}) {
      BOOST_TEST_CONTEXT(backend_name(backend) << " -O" << level) {
        JitOptions options;
        options.backend = backend;
        options.opt_level = level;
        Module m = compile_source("lengths_programs.scan", text, options);
        std::mt19937 data(7);
        for (const Program& p : programs) {
          check_program(m, p, data, true);
          check_program(m, p, data, false);
        }
      }
    }
  std::cout << count << " random programs with lengths, each row against its plain scan on 3 backends at -O0 and -O2\n";
}
