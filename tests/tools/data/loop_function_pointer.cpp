// Rule (e): a call through a function pointer inside a time loop. Direct calls and lambda calls
// are allowed.
#include <cstdint>

namespace {
float square(float value) { return value * value; }
float negate(float value) { return -value; }
}  // namespace

void scan_map(const float* x, float* y, int64_t n, bool flip) {
  float (*elementwise)(float) = flip ? negate : square;
  const auto scale = [](float value) { return 3.0f * value; };
  for (int64_t step = 0; step < n; ++step) {
    y[step] = elementwise(x[step]);  // EXPECT: loop-hygiene: call through function pointer
    y[step] += scale(square(x[step]));
  }
}
