// Decoding (issue 17): the decoders of samples/viterbi.scan and samples/beam_search.scan compiled by
// scangen, against the same algorithms written by hand in plain C++ (bench/decoders_handwritten.cpp,
// no BLAS) in the same run. Before timing, both sides decode the benchmark's inputs once and must
// agree bit for bit. It prints the time per decoded sequence and the ratios the targets speak of:
//
// - beam search, beam 8, vocabulary 32,000, hidden 512, 64 output steps (f32, one CPU thread):
//   scangen / hand-written <= 1.2;
// - Viterbi, 64 states, 10^5 observations: scangen / hand-written <= 1.1.
//
//   build/bin/scangen_decode_bench
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_support.h"
#include "decoders_handwritten.h"
#include "scangen_decode_kernels_scangen/beam_search.h"
#include "scangen_decode_kernels_scangen/viterbi.h"

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

decode::beam_search_results beam_generated() {
  const BeamInputs& in = beam_inputs();
  return decode::beam_search({in.E.data(), {kVocab, kHidden}}, {in.W.data(), {kHidden, kHidden}},
                             {in.Wout.data(), {kHidden, kVocab}}, {in.h0.data(), {kHidden}}, kBos, kEos, kBeam,
                             kOutputSteps);
}

decode::viterbi_results viterbi_generated() {
  const ViterbiInputs& in = viterbi_inputs();
  return decode::viterbi({in.log_pi.data(), {kStates}}, {in.log_A.data(), {kStates, kStates}},
                         {in.log_B.data(), {kStates, kSymbols}}, {in.obs.data(), {kObservations}});
}

void BM_beam_search_scangen(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(beam_generated());
}

void BM_beam_search_handwritten(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(beam_handwritten());
}

void BM_viterbi_scangen(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(viterbi_generated());
}

void BM_viterbi_handwritten(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(viterbi_handwritten());
}

SCANGEN_BENCHMARK(BM_beam_search_scangen);
SCANGEN_BENCHMARK(BM_beam_search_handwritten);
SCANGEN_BENCHMARK(BM_viterbi_scangen);
SCANGEN_BENCHMARK(BM_viterbi_handwritten);

void print_ratios(const scangen_bench::TimesReporter& r) {
  std::printf("\nms per decoded sequence (fastest repetition):\n");
  for (const char* name : {"BM_beam_search_scangen", "BM_beam_search_handwritten", "BM_viterbi_scangen",
                           "BM_viterbi_handwritten"})
    if (r.time(name) > 0) std::printf("  %-30s %9.2f ms\n", name, r.time(name));
  std::printf("\nratios (time / time):\n");
  auto ratio = [&](const char* a, const char* b, const char* target) {
    const double x = r.time(a), y = r.time(b);
    if (x > 0 && y > 0) std::printf("  %-24s / %-28s %6.2fx  (target %s)\n", a, b, x / y, target);
  };
  ratio("BM_beam_search_scangen", "BM_beam_search_handwritten", "<= 1.2x");
  ratio("BM_viterbi_scangen", "BM_viterbi_handwritten", "<= 1.1x");
}

// Both sides give the same tokens and the same score, bit for bit (the same operations in the
// same order), and the inputs give what the benchmark describes: every output step runs.
bool same(const char* what, const scangen::Tensor<int64_t>& tokens, float score, const scangen_bench::Decoded& d) {
  bool ok = int64_t(tokens.size()) == int64_t(d.tokens.size()) && score == d.score;
  for (int64_t i = 0; ok && i < int64_t(tokens.size()); ++i) ok = tokens[i] == d.tokens[size_t(i)];
  if (!ok)
    std::fprintf(stderr, "%s: scangen and the hand-written decoder disagree: %lld tokens, score %.9g against %zu, %.9g\n",
                 what, (long long)tokens.size(), double(score), d.tokens.size(), double(d.score));
  return ok;
}

bool check_inputs() {
  const scangen_bench::Decoded beam = beam_handwritten();
  if (beam.steps != kOutputSteps || int64_t(beam.tokens.size()) != kOutputSteps) {
    std::fprintf(stderr, "beam search: %lld steps and %zu tokens, expected %lld of each\n", (long long)beam.steps,
                 beam.tokens.size(), (long long)kOutputSteps);
    return false;
  }
  const decode::beam_search_results beam_g = beam_generated();
  const decode::viterbi_results viterbi_g = viterbi_generated();
  return same("beam search", beam_g.tokens, beam_g.score, beam) &&
         same("viterbi", viterbi_g.path, viterbi_g.score, viterbi_handwritten());
}

}  // namespace

int main(int argc, char** argv) {
  if (!check_inputs()) return 1;
  return scangen_bench::run_comparison(argc, argv, print_ratios);
}
