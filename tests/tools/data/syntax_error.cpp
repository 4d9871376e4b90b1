// Code that does not compile: an error is a finding as well.
#include <cstdint>

void scan_broken(const float* x, float* y, int64_t n) {
  for (int64_t step = 0; step < n; ++step) {
    y[step] = x[step] + undeclared_carry;  // EXPECT: error: use of undeclared identifier 'undeclared_carry'
  }
}
