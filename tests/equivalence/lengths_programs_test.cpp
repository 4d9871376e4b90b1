// Random programs over variable-length batches (issue 29): random scans with `lengths = L` (past
// and future taps of one or two sequences, one to three states of one or two lags, per-step
// outputs, forward or reverse) and random batches (zero lengths, full rows, one row). Each row of
// the batched scan must be, bit for bit, the plain scan of that row's own L[b] steps written
// without `lengths` (the contract's definition), on the interpreter, the CPU backend and the CUDA
// emulation at -O0 and -O2 (tests/unit/lengths_test.cpp holds packed batches to padded ones).
// All programs of a run share one .scan text, compiled once per backend and level.
//   SCANGEN_LENGTHS_PROGRAMS (default 20 in CI, 200 in tests/run_long.sh), SCANGEN_LENGTHS_SEED.
#define BOOST_TEST_MODULE lengths_programs
#include <boost/test/unit_test.hpp>

#include <algorithm>
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
  std::string batched, plain;
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
  for (size_t i = 0; i < p.state_lags.size(); ++i) {
    body << "        init s" << i << " = h" << i << "\n";
    body << "        s" << i << "[t] = tanh(" << step_expr(rng, p, 3) << (i == 0 ? all_taps : "") << " + "
         << tap("s" + std::to_string(i), -p.state_lags[i]) << " * 0.5)\n";
    names += (names.empty() ? "" : ", ") + ("s" + std::to_string(i));
  }
  for (int o = 0; o < p.outputs; ++o) {
    body << "        y" << o << "[t] = " << step_expr(rng, p, 2) << " * 0.5\n";
    names += ", y" + std::to_string(o);
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
  p.batched = function("batched", "(lengths = L" + std::string(p.reverse ? ", reverse" : "") + ")", ", L: i64[B]");
  p.plain = function("plain", p.reverse ? "(reverse)" : "", "");
}

// One module for all programs.
std::string program_text(const std::vector<Program>& programs) {
  std::string text;
  for (const Program& p : programs) text += p.batched + "\n" + p.plain + "\n";
  return text;
}

// Runs program p on a random batch and checks every row against its plain scan.
void check_program(const Module& m, const Program& p, std::mt19937& rng) {
  int64_t steps = std::uniform_int_distribution<int64_t>(0, 4)(rng), batch = std::uniform_int_distribution<int64_t>(1, 3)(rng);
  std::vector<int64_t> lengths;
  int shape = int(rng() % 4);  // 0, 1: random; 2: all full; 3: all empty
  for (int64_t b = 0; b < batch; ++b)
    lengths.push_back(shape == 2 ? steps : shape == 3 ? 0 : std::uniform_int_distribution<int64_t>(0, steps)(rng));
  std::vector<HostTensor> xs, ws, hs;
  for (int s = 0; s < p.sequences; ++s) {
    xs.push_back(random_f32(rng, {steps + p.span(), batch, kI}, 1));
    ws.push_back(random_f32(rng, {kI, kH}, 1));
  }
  for (int lag : p.state_lags) hs.push_back(random_f32(rng, lag > 1 ? Shape{2, batch, kH} : Shape{batch, kH}, 1));
  HostTensor U = random_f32(rng, {kH, kH}, 0.5f);
  auto args = [&](auto&& sequence, auto&& init) {
    std::vector<HostTensor> a;
    for (int s = 0; s < p.sequences; ++s) {
      a.push_back(sequence(xs[size_t(s)]));
      a.push_back(ws[size_t(s)]);
    }
    for (size_t i = 0; i < hs.size(); ++i) a.push_back(init(hs[i], p.state_lags[i]));
    a.push_back(U);
    return a;
  };
  std::vector<HostTensor> batched_args = args([](const HostTensor& x) { return x; }, [](const HostTensor& h, int) { return h; });
  batched_args.push_back(HostTensor::from_vector<int64_t>(lengths, {batch}));
  std::vector<HostTensor> r = m.call("batched" + std::to_string(p.id), batched_args);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t length = lengths[size_t(b)];
    std::vector<HostTensor> q = m.call(
        "plain" + std::to_string(p.id),
        args([&](const HostTensor& x) { return row_of(x, 1, b, length + p.span()); },
             [&](const HostTensor& h, int lag) { return lag > 1 ? row_of(h, 1, b, 2) : row_of(h, 0, b, 1); }));
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
        for (const Program& p : programs) check_program(m, p, data);
      }
    }
  std::cout << count << " random programs with lengths, each row against its plain scan on 3 backends at -O0 and -O2\n";
}
