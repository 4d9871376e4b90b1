// The hand-written peers of bench/peers: the loops a C++ programmer writes with OpenBLAS for an
// Elman RNN and an LSTM (one product for every step's input projection, then per step one
// product of the state, added into that step's rows, and the nonlinearities), and the plain
// loop of the element-wise linear recurrence. Results go to caller-owned memory, C-ordered.
#pragma once

#include <cstdint>

namespace peers {

// h[t] = tanh(x[t] @ W_xh + h[t-1] @ W_hh + b); x: [T, B, I], h0: [B, H], W_xh: [I, H],
// W_hh: [H, H], b: [H]; h: [T, B, H].
void openblas_elman(const float* x, const float* h0, const float* W_xh, const float* W_hh,
                    const float* b, float* h, int64_t T, int64_t B, int64_t I, int64_t H);

// The gates of samples/lstm.scan packed side by side, as BLAS wants them: W: [I, 4H],
// U: [H, 4H], b: [4H], gate k in columns k*H..(k+1)*H-1 (i, f, g, o).
struct PackedLstmWeights {
  const float* W;
  const float* U;
  const float* b;
};

// samples/lstm.scan's LSTM. x: [T, B, I], h0 and c0: [B, H]; h and c: [T, B, H]; gates:
// scratch of T * B * 4H floats (the projections, then each step's pre-activations).
void openblas_lstm(const float* x, const float* h0, const float* c0, const PackedLstmWeights& w,
                   float* h, float* c, float* gates, int64_t T, int64_t B, int64_t I, int64_t H);

// h[t] = a[t] * h[t-1] + b[t] over N channels, split into `threads` bands of channels (each
// channel's chain is independent, so the bands need no synchronization).
void handwritten_linear(const float* a, const float* b, const float* h0, float* h, int64_t T,
                        int64_t N, int threads);

}  // namespace peers
