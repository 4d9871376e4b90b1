// C++ functions for samples/imports/*.scan. scangen calls what `namespace scangen_export`
// defines: scalar parameters and results of bool, int, long, float and double, applied element by
// element. `f_d<i>` is f's derivative with respect to its parameter i (for grad). The CUDA backend
// calls only `__host__ __device__` functions; the macros below let a host compiler read them, and
// the header includes nothing under NVRTC, where the math functions are built in.
#pragma once

#ifndef __CUDACC__
#define __host__
#define __device__
#endif
#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace scangen_export {

// x / (1 + |x|): a smooth squashing function, exact for the inputs of the sample's runs.
__host__ __device__ inline double softsign(double x) { return x / (1.0 + (x < 0.0 ? -x : x)); }
__host__ __device__ inline double softsign_d0(double x) {
  double d = 1.0 + (x < 0.0 ? -x : x);
  return 1.0 / (d * d);
}

// One classical Runge-Kutta step of logistic growth dy/dt = r y (1 - y / K).
__host__ __device__ inline double logistic_rate(double y, double r, double K) { return r * y * (1.0 - y / K); }
__host__ __device__ inline double rk4_logistic(double y, double r, double K, double dt) {
  double k1 = logistic_rate(y, r, K);
  double k2 = logistic_rate(y + 0.5 * dt * k1, r, K);
  double k3 = logistic_rate(y + 0.5 * dt * k2, r, K);
  double k4 = logistic_rate(y + dt * k3, r, K);
  return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
}

// a x + y with an integer weight, to show arguments of several dtypes broadcast together.
__host__ __device__ inline double weighted(int a, double x, double y) { return a * x + y; }

// log(1 + e^x), and its derivative the logistic function.
__host__ __device__ inline double softplus(double x) { return log1p(exp(x)); }
__host__ __device__ inline double softplus_d0(double x) { return 1.0 / (1.0 + exp(-x)); }

// Whether n is even (an integer and a bool in the signature).
__host__ __device__ inline bool is_even(long n) { return n % 2 == 0; }

}  // namespace scangen_export
