#include "openblas_loops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace peers {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// rows[m, n] += a[m, k] @ b[k, n], all row-major and dense.
void add_product(const float* a, const float* b, float* rows, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 1.0f, rows, n);
}

// rows[m, n] = a[m, k] @ b[k, n].
void product(const float* a, const float* b, float* rows, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, rows, n);
}

}  // namespace

void openblas_elman(const float* x, const float* h0, const float* W_xh, const float* W_hh,
                    const float* b, float* h, int64_t T, int64_t B, int64_t I, int64_t H) {
  product(x, W_xh, h, T * B, H, I);  // every step's x[t] @ W_xh at once, into h's rows
  const float* prev = h0;
  for (int64_t t = 0; t < T; ++t) {
    float* ht = h + t * B * H;
    add_product(prev, W_hh, ht, B, H, H);
    for (int64_t r = 0; r < B; ++r) {
      float* row = ht + r * H;
      for (int64_t j = 0; j < H; ++j) row[j] = std::tanh(row[j] + b[j]);
    }
    prev = ht;
  }
}

void openblas_lstm(const float* x, const float* h0, const float* c0, const PackedLstmWeights& w,
                   float* h, float* c, float* gates, int64_t T, int64_t B, int64_t I, int64_t H) {
  const int64_t G = 4 * H;
  product(x, w.W, gates, T * B, G, I);
  const float* h_prev = h0;
  const float* c_prev = c0;
  for (int64_t t = 0; t < T; ++t) {
    float* zt = gates + t * B * G;
    add_product(h_prev, w.U, zt, B, G, H);
    float* ht = h + t * B * H;
    float* ct = c + t * B * H;
    for (int64_t r = 0; r < B; ++r) {
      const float* z = zt + r * G;
      for (int64_t j = 0; j < H; ++j) {
        float i = sigmoid(z[j] + w.b[j]);
        float f = sigmoid(z[H + j] + w.b[H + j]);
        float g = std::tanh(z[2 * H + j] + w.b[2 * H + j]);
        float o = sigmoid(z[3 * H + j] + w.b[3 * H + j]);
        float cv = f * c_prev[r * H + j] + i * g;
        ct[r * H + j] = cv;
        ht[r * H + j] = o * std::tanh(cv);
      }
    }
    h_prev = ht;
    c_prev = ct;
  }
}

void handwritten_linear(const float* a, const float* b, const float* h0, float* h, int64_t T,
                        int64_t N, int threads) {
  auto band = [=](int64_t lo, int64_t hi) {
    const float* prev = h0;
    for (int64_t t = 0; t < T; ++t) {
      const float* __restrict at = a + t * N;
      const float* __restrict bt = b + t * N;
      float* __restrict ht = h + t * N;
      for (int64_t i = lo; i < hi; ++i) ht[i] = at[i] * prev[i] + bt[i];
      prev = ht;
    }
  };
  if (threads <= 1) return band(0, N);
  std::vector<std::thread> workers;
  int64_t per = (N + threads - 1) / threads;
  for (int64_t lo = 0; lo < N; lo += per) workers.emplace_back(band, lo, std::min(N, lo + per));
  for (std::thread& w : workers) w.join();
}

}  // namespace peers
