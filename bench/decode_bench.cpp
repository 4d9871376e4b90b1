// Decoding (issue 17): the decoders of samples/viterbi.scan and samples/beam_search.scan written by
// hand in plain C++ (bench/decoders_handwritten.cpp, no BLAS), timed per decoded sequence:
//
// - beam search, beam 8, vocabulary 32,000, hidden 512, 64 output steps (f32, one CPU thread);
// - Viterbi, 64 states, 10^5 observations.
//
// The samples wait in tools/pending/ for the builtins they need; the commit that moves them to
// samples/ adds their scangen-compiled side here, checked against this one before timing, and the
// ratios the targets speak of (scangen / hand-written <= 1.2 and <= 1.1).
//
//   build/bin/scangen_decode_bench
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_support.h"
#include "decoders_handwritten.h"

namespace {

using scangen_bench::random_values;

constexpr int64_t kBeam = 8, kVocab = 32'000, kHidden = 512, kOutputSteps = 64;
constexpr int64_t kBos = 1, kEos = 0;
constexpr int64_t kStates = 64, kObservations = 100'000, kSymbols = 1'000;

// Weights scaled so that the hidden states and the logits stay in tanh's and exp's working range.
// With 32,000 tokens the end token is about as likely as any other: the 8 hypotheses all ending
// within 64 steps does not happen for these weights (main() checks that every step runs).
struct BeamInputs {
  std::vector<float> E = random_values(kVocab * kHidden, -1.0f, 1.0f, 11);
  std::vector<float> W = random_values(kHidden * kHidden, -0.06f, 0.06f, 12);
  std::vector<float> Wout = random_values(kHidden * kVocab, -0.1f, 0.1f, 13);
  std::vector<float> h0 = random_values(kHidden, -0.5f, 0.5f, 14);
};

const BeamInputs& beam_inputs() {
  static const BeamInputs inputs;
  return inputs;
}

// Log-probabilities (not normalized: the decoder does not need them to be) and observations.
struct ViterbiInputs {
  std::vector<float> log_pi = random_values(kStates, -5.0f, 0.0f, 21);
  std::vector<float> log_A = random_values(kStates * kStates, -5.0f, 0.0f, 22);
  std::vector<float> log_B = random_values(kStates * kSymbols, -5.0f, 0.0f, 23);
  std::vector<int64_t> obs = [] {
    std::vector<float> u = random_values(kObservations, 0.0f, float(kSymbols), 24);
    std::vector<int64_t> o(u.size());
    for (size_t t = 0; t < u.size(); ++t) o[t] = std::min<int64_t>(int64_t(u[t]), kSymbols - 1);
    return o;
  }();
};

const ViterbiInputs& viterbi_inputs() {
  static const ViterbiInputs inputs;
  return inputs;
}

scangen_bench::Decoded beam_handwritten() {
  const BeamInputs& in = beam_inputs();
  return scangen_bench::beam_search(in.E.data(), in.W.data(), in.Wout.data(), in.h0.data(), kVocab, kHidden, kBos,
                                    kEos, kBeam, kOutputSteps);
}

scangen_bench::Decoded viterbi_handwritten() {
  const ViterbiInputs& in = viterbi_inputs();
  return scangen_bench::viterbi(in.log_pi.data(), in.log_A.data(), in.log_B.data(), in.obs.data(), kStates,
                                kSymbols, kObservations);
}

void BM_beam_search_handwritten(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(beam_handwritten());
}

void BM_viterbi_handwritten(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(viterbi_handwritten());
}

SCANGEN_BENCHMARK(BM_beam_search_handwritten);
SCANGEN_BENCHMARK(BM_viterbi_handwritten);

void print_times(const scangen_bench::TimesReporter& r) {
  std::printf("\nms per decoded sequence (fastest repetition):\n");
  for (const char* name : {"BM_beam_search_handwritten", "BM_viterbi_handwritten"})
    if (r.time(name) > 0) std::printf("  %-30s %9.2f ms\n", name, r.time(name));
}

// The benchmark's inputs must give what the benchmark describes: every output step runs.
bool check_inputs() {
  const scangen_bench::Decoded beam = beam_handwritten();
  if (beam.steps != kOutputSteps || int64_t(beam.tokens.size()) != kOutputSteps) {
    std::fprintf(stderr, "beam search: %lld steps and %zu tokens, expected %lld of each\n", (long long)beam.steps,
                 beam.tokens.size(), (long long)kOutputSteps);
    return false;
  }
  return std::isfinite(viterbi_handwritten().score);
}

}  // namespace

int main(int argc, char** argv) {
  if (!check_inputs()) return 1;
  return scangen_bench::run_comparison(argc, argv, print_times);
}
