// An implicit float -> integer conversion, reported by -Wconversion (-Wfloat-conversion).
#include <cstdint>

void scan_quantize(const float* x, int32_t* y, int64_t n) {
  for (int64_t step = 0; step < n; ++step) {
    int32_t rounded = x[step] * 2.0f;  // EXPECT: warning: implicit conversion turns floating-point number into integer: 'float' to 'int32_t'
    y[step] = rounded;
  }
}
