// Mimics code that scangen emits for a CPU scan: a time loop over raw pointers with a nested
// element loop, error checks that throw or call a [[noreturn]] helper, and all allocation before
// the loop. scangen-codecheck must accept it: no warnings, no loop-hygiene findings.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T> inline T add(T a, T b) { return a + b; }

[[noreturn]] void scangen_fail_index(int64_t index, int64_t size) {
  throw std::out_of_range("index " + std::to_string(index) + " out of range for size " +
                          std::to_string(size));
}

struct Decay final {
  virtual ~Decay() = default;
  virtual float apply(float value) const { return value * 0.5f; }  // final class: no dispatch
};

}  // namespace

// carry[j] = carry[j] / 2 + x[step, j], y[step, j] = carry[j]
void scan_decay(const float* x, float* y, const int64_t* gather, int64_t n, int64_t m) {
  std::vector<float> carry(static_cast<size_t>(m), 0.0f);  // allocated before the time loop
  float* carry_data = carry.data();
  const Decay decay;
  for (int64_t step = 0; step < n; ++step) {
    if (!std::isfinite(x[step * m])) throw std::runtime_error("non-finite input at step " + std::to_string(step));
    const int64_t source = gather[step];
    if (source < 0) {
      throw std::out_of_range(std::string("negative index ") + std::to_string(source));
    }
    if (source >= m) {
      scangen_fail_index(source, m);
    }
    const auto combine = [](float a, float b) { return add(a, b); };
    for (int64_t j = 0; j < m; ++j) {
      carry_data[j] = combine(decay.apply(carry_data[j]), x[step * m + j]);
      y[step * m + j] = carry[static_cast<size_t>(j)];
    }
    if (carry.size() != static_cast<size_t>(m)) std::abort();
  }
}

// Nested time loops (an outer scan around an inner one), and a loop over a variable declared
// before the loop.
double scan_nested(const double* x, int64_t outer, int64_t inner) {
  double total = 0.0;
  for (int64_t step_outer = 0; step_outer < outer; ++step_outer) {
    double partial = 0.0;
    for (int64_t step_inner = 0; step_inner < inner; ++step_inner) {
      partial = add(partial, x[step_outer * inner + step_inner]);
    }
    total += std::sqrt(std::fabs(partial));
  }
  int64_t step2 = 0;
  for (step2 = 0; step2 < outer; ++step2) total -= x[step2];
  return total;
}

// Ordinary loops that are not time loops may allocate (setup code).
std::vector<std::string> names_of_steps(int64_t steps) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < steps; ++i) names.push_back("step " + std::to_string(i));
  return names;
}
