// Rule (d): a virtual call inside a time loop. Calls to final overriders and qualified calls do
// not dispatch and are allowed.
#include <cstdint>

struct Op {
  virtual ~Op() = default;
  virtual float apply(float value) const = 0;
};

struct Twice final : Op {
  float apply(float value) const override { return 2.0f * value; }
};

struct Half : Op {
  float apply(float value) const override { return 0.5f * value; }
};

void scan_apply(const Op& op, const Twice& twice, const Half& half, const float* x, float* y,
                int64_t n) {
  for (int64_t step = 0; step < n; ++step) {
    y[step] = op.apply(x[step]);  // EXPECT: loop-hygiene: virtual call to 'Op::apply'
    y[step] += twice.apply(x[step]) + half.Half::apply(x[step]);
  }
}
