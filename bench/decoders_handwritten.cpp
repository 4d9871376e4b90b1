#include "decoders_handwritten.h"

#include <cmath>
#include <cstddef>
#include <limits>

namespace scangen_bench {

namespace {

using Index = std::ptrdiff_t;

// A vector of n elements (n counted in signed sizes, as the arguments are).
template <class T> std::vector<T> buffer(Index n, T value = T()) { return std::vector<T>(static_cast<size_t>(n), value); }

// out[b, :] = x[b, :] @ M for the `rows` rows of x ([rows, K]) and M ([K, N]): k outermost, so a
// row of M is read once for all the rows of x; each out[b, n] still sums over k from 0.
void rows_times_matrix(const float* x, const float* M, Index rows, Index K, Index N, float* out) {
  for (Index i = 0; i < rows * N; ++i) out[i] = 0.0f;
  for (Index k = 0; k < K; ++k) {
    const float* m = M + k * N;
    for (Index b = 0; b < rows; ++b) {
      const float xk = x[b * K + k];
      float* o = out + b * N;
      for (Index n = 0; n < N; ++n) o[n] += xk * m[n];
    }
  }
}

// In place: row - max(row) - log(sum(exp(row - max(row)))), the sum from left to right.
void log_softmax(float* row, Index n) {
  float m = row[0];
  for (Index v = 1; v < n; ++v) m = row[v] > m ? row[v] : m;
  float sum = 0.0f;
  for (Index v = 0; v < n; ++v) {
    row[v] -= m;
    sum += std::exp(row[v]);
  }
  const float log_sum = std::log(sum);
  for (Index v = 0; v < n; ++v) row[v] -= log_sum;
}

// The k largest values seen, in descending order: a small sorted buffer. A value equal to one
// already held goes after it, so ties keep the lower index (the values arrive in index order).
class TopK {
 public:
  explicit TopK(Index k) : k_(k) { entries_.reserve(size_t(k)); }
  void clear() { entries_.clear(); }
  void offer(float value, int64_t index) {
    const Index n = Index(entries_.size());
    if (n == k_ && !(value > entries_[size_t(n - 1)].value)) return;
    if (n < k_) entries_.push_back({value, index});
    Index at = Index(entries_.size()) - 1;
    for (; at > 0 && value > entries_[size_t(at - 1)].value; --at) entries_[size_t(at)] = entries_[size_t(at - 1)];
    entries_[size_t(at)] = {value, index};
  }
  struct Entry {
    float value;
    int64_t index;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  Index k_;
  std::vector<Entry> entries_;
};

}  // namespace

Decoded viterbi(const float* log_pi, const float* log_A, const float* log_B, const int64_t* obs, int64_t S,
                int64_t V, int64_t T) {
  // The emissions of one observation for every state, side by side.
  std::vector<float> emit = buffer<float>(V * S);
  for (Index j = 0; j < S; ++j)
    for (Index o = 0; o < V; ++o) emit[size_t(o * S + j)] = log_B[j * V + o];
  std::vector<float> delta_buffer = buffer<float>(S), best_buffer = buffer<float>(S);
  std::vector<int64_t> back = buffer<int64_t>(T * S);
  float* delta = delta_buffer.data();
  float* best = best_buffer.data();
  const float* e = emit.data() + obs[0] * S;
  for (Index j = 0; j < S; ++j) delta[j] = log_pi[j] + e[j];
  for (Index t = 1; t < T; ++t) {
    int64_t* arg = back.data() + t * S;
    for (Index j = 0; j < S; ++j) {
      best[j] = delta[0] + log_A[j];
      arg[j] = 0;
    }
    for (Index i = 1; i < S; ++i) {
      const float d = delta[i];
      const float* a = log_A + i * S;
      for (Index j = 0; j < S; ++j) {
        const float v = d + a[j];
        const bool better = v > best[j];
        best[j] = better ? v : best[j];
        arg[j] = better ? i : arg[j];
      }
    }
    e = emit.data() + obs[t] * S;
    for (Index j = 0; j < S; ++j) delta[j] = best[j] + e[j];
  }
  Index last = 0;
  for (Index j = 1; j < S; ++j)
    if (delta[j] > delta[last]) last = j;
  Decoded out;
  out.score = delta[last];
  out.tokens.resize(size_t(T));
  out.tokens[size_t(T - 1)] = last;
  for (Index t = T - 1; t > 0; --t) out.tokens[size_t(t - 1)] = back[size_t(t * S + out.tokens[size_t(t)])];
  return out;
}

Decoded beam_search(const float* E, const float* W, const float* Wout, const float* h0, int64_t V, int64_t H,
                    int64_t bos, int64_t eos, int64_t beam, int64_t max_len) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  std::vector<float> h = buffer<float>(beam * H), h_new = buffer<float>(beam * H), logits = buffer<float>(beam * V);
  std::vector<float> score = buffer<float>(beam, minus_inf);
  std::vector<int64_t> last = buffer<int64_t>(beam, bos);
  std::vector<char> ended = buffer<char>(beam, 0), ended_next = buffer<char>(beam, 0);
  std::vector<int64_t> parents, tokens;  // per step, beam entries each
  for (Index b = 0; b < beam; ++b)
    for (Index k = 0; k < H; ++k) h[size_t(b * H + k)] = h0[k];
  score[0] = 0.0f;  // only the first hypothesis is live at the start
  TopK top(beam);
  Index steps = 0;
  while (steps < max_len) {
    rows_times_matrix(h.data(), W, beam, H, H, h_new.data());
    for (Index b = 0; b < beam; ++b) {
      const float* x = E + last[size_t(b)] * H;
      float* hb = h_new.data() + b * H;
      for (Index k = 0; k < H; ++k) hb[k] = std::tanh(x[k] + hb[k]);
    }
    rows_times_matrix(h_new.data(), Wout, beam, H, V, logits.data());
    top.clear();
    for (Index b = 0; b < beam; ++b) {
      const float s = score[size_t(b)];
      if (ended[size_t(b)]) {  // an ended hypothesis only continues with eos, at no cost
        for (Index v = 0; v < V; ++v) top.offer(v == eos ? s + 0.0f : minus_inf, b * V + v);
        continue;
      }
      float* row = logits.data() + b * V;
      log_softmax(row, V);
      for (Index v = 0; v < V; ++v) top.offer(s + row[v], b * V + v);
    }
    bool all_ended = true;
    for (Index b = 0; b < beam; ++b) {
      const auto& entry = top.entries()[size_t(b)];
      const int64_t parent = entry.index / V, token = entry.index % V;
      parents.push_back(parent);
      tokens.push_back(token);
      score[size_t(b)] = entry.value;
      last[size_t(b)] = token;
      ended_next[size_t(b)] = ended[size_t(parent)] || token == eos;
      all_ended = all_ended && ended_next[size_t(b)];
      for (Index k = 0; k < H; ++k) h[size_t(b * H + k)] = h_new[size_t(parent * H + k)];
    }
    ended.swap(ended_next);
    ++steps;
    if (all_ended) break;
  }
  // Backtrack the best (first) hypothesis; keep its tokens up to its first eos.
  Decoded out;
  out.score = score[0];
  out.steps = steps;
  out.tokens.resize(size_t(steps));
  int64_t at = 0;
  for (Index t = steps - 1; t >= 0; --t) {
    out.tokens[size_t(t)] = tokens[size_t(t * beam + at)];
    at = parents[size_t(t * beam + at)];
  }
  for (size_t t = 0; t < out.tokens.size(); ++t)
    if (out.tokens[t] == eos) {
      out.tokens.resize(t + 1);
      break;
    }
  return out;
}

}  // namespace scangen_bench
