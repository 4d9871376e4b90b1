// The decoders of samples/viterbi.scan and samples/beam_search.scan written by hand in plain C++
// (no BLAS): the baselines of bench/decode_bench.cpp. They follow the samples' operation order
// (f32 products accumulated over k from 0, sums left to right, ties to the lower index), so their
// results are the samples' bit for bit; tests/unit/decoders_handwritten_test.cpp checks them
// against the samples' manifests, whose expectations come from NumPy (tools/decode_samples.py).
#pragma once

#include <cstdint>
#include <vector>

namespace scangen_bench {

struct Decoded {
  std::vector<int64_t> tokens;  // the path (Viterbi) or the best hypothesis (beam search)
  float score = 0;
  int64_t steps = 0;            // beam search: the steps taken (max_len unless all ended sooner)
};

// The most likely state path of an HMM in log space: log_pi[S], log_A[S, S] (from, to),
// log_B[S, V] (state, observation), obs[T] with T >= 1 and every obs in [0, V).
Decoded viterbi(const float* log_pi, const float* log_A, const float* log_B, const int64_t* obs, int64_t S,
                int64_t V, int64_t T);

// samples/beam_search.scan: E[V, H], W[H, H], Wout[H, V], h0[H]; bos and eos in [0, V),
// beam >= 1, max_len >= 1.
Decoded beam_search(const float* E, const float* W, const float* Wout, const float* h0, int64_t V, int64_t H,
                    int64_t bos, int64_t eos, int64_t beam, int64_t max_len);

}  // namespace scangen_bench
