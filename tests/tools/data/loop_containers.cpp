// Rule (c): growing std containers and constructing them inside a time loop, also inside a lambda
// defined in the loop body.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

void scan_collect(const float* x, int64_t n, std::vector<float>& out, std::map<int64_t, float>& seen) {
  out.reserve(static_cast<size_t>(n));  // before the loop: allowed
  for (int64_t step = 0; step < n; ++step) {
    out.push_back(x[step]);  // EXPECT: loop-hygiene: call to std::vector::push_back (may allocate)
    std::vector<float> window(4, x[step]);  // EXPECT: loop-hygiene: construction of std::vector
    std::unordered_map<int64_t, float> index;  // EXPECT: loop-hygiene: construction of std::unordered_map
    seen.emplace(step, window[0]);  // EXPECT: loop-hygiene: call to std::map::emplace (may allocate)
    const auto label = [&]() {
      std::string text("step");  // EXPECT: loop-hygiene: construction of std::string
      return text.size();
    };
    out.resize(out.size() + label() + index.size());  // EXPECT: loop-hygiene: call to std::vector::resize (may allocate)
    const auto name = std::to_string(step);  // EXPECT: loop-hygiene: construction of std::string (returned by value from 'to_string')
    out.back() += static_cast<float>(name.size());
  }
}
