// Rule (a): new and delete expressions inside a scan time loop.
#include <cstdint>

void scan_scratch(const float* x, float* y, int64_t n, int64_t m) {
  for (int64_t step = 0; step < n; ++step) {
    float* scratch = new float[static_cast<unsigned long>(m)];  // EXPECT: loop-hygiene: new expression
    for (int64_t j = 0; j < m; ++j) scratch[j] = x[step * m + j];
    y[step] = scratch[0];
    delete[] scratch;  // EXPECT: loop-hygiene: delete expression
  }
}
