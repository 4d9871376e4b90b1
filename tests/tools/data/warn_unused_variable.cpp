// A warning (-Wunused-variable) in otherwise clean emitted code.
#include <cstdint>

void scan_sum(const float* x, float* y, int64_t n) {
  float carry = 0.0f;
  int64_t unused = n;  // EXPECT: warning: unused variable 'unused' [-Wunused-variable]
  for (int64_t step = 0; step < n; ++step) {
    carry += x[step];
    y[step] = carry;
  }
}
