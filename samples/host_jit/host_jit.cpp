// A host program that JIT-compiles a .scan file and calls it on its own memory.
//
//   host_jit smooth.scan [cpu|cuda|cuda-emulation|interp]
//
// Smooths a noisy signal with the file's `smooth` function, checks the result against the same
// loop written here in C++, and prints a few values. Exit status 0 when they agree, 1 when they do
// not, 2 for a bad command line, 3 when the program or the backend fails (the error is printed).
#include <scangen/scangen.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::vector<float> noisy_signal(int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = std::sin(0.05f * float(i)) + 0.3f * std::sin(7.1f * float(i));
  return x;
}

// The recurrence of smooth.scan, by hand.
std::vector<float> smooth_by_hand(const std::vector<float>& x, float alpha) {
  std::vector<float> y(x.size());
  float previous = x.empty() ? 0.0f : x[0];
  for (size_t t = 0; t < x.size(); ++t) y[t] = previous = previous + alpha * (x[t] - previous);
  return y;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: host_jit FILE.scan [cpu|cuda|cuda-emulation|interp]\n");
    return 2;
  }
  scangen::JitOptions options;
  if (argc == 3) {
    std::optional<scangen::Backend> backend = scangen::backend_from_name(argv[2]);
    if (!backend) {
      std::fprintf(stderr, "host_jit: unknown backend '%s'\n", argv[2]);
      return 2;
    }
    options.backend = *backend;
  }
  const int n = 1000;
  const float alpha = 0.1f;
  std::vector<float> x = noisy_signal(n);
  std::vector<scangen::HostTensor> results;
  try {
    scangen::Module module = scangen::compile_file(argv[1], options);
    results = module.call("smooth", {scangen::view(x.data(), {n}), scangen::HostTensor::scalar(alpha)});
  } catch (const std::exception& e) {  // CompileError, ProgramError, RuntimeError: rendered
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
  const float* y = results.at(0).data<float>();
  std::vector<float> expected = smooth_by_hand(x, alpha);
  int mismatches = 0;
  for (int i = 0; i < n; ++i) mismatches += y[i] != expected[static_cast<size_t>(i)];
  std::printf("backend %s: y[0] = %g, y[500] = %g, y[999] = %g; %d of %d elements differ from the C++ loop\n",
              std::string(scangen::backend_name(options.backend)).c_str(), y[0], y[500], y[999], mismatches, n);
  return mismatches == 0 ? 0 : 1;
}
