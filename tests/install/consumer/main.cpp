// consumer <project dir>: calls the generated API of smooth.scan and clip.scan (built by
// scangen_add_library) and the same files JIT-compiled through <scangen/scangen.h>, and compares
// the bits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <scangen/scangen.h>

#include "clip.h"
#include "smooth.h"

namespace {
bool same(const char* what, const float* generated, const float* jitted, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!(generated[i] == jitted[i])) {
      std::printf("FAIL %s element %lld: generated %g, JIT %g\n", what, (long long)i, double(generated[i]), double(jitted[i]));
      return false;
    }
  std::printf("ok %s: generated and JIT agree on %lld elements (y[%lld] = %g)\n", what, (long long)n, (long long)n - 1,
              double(generated[n - 1]));
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer PROJECT_DIR\n");
    return 2;
  }
  std::vector<float> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.1 * double(i)));
  const int64_t n = int64_t(x.size());
  const std::string dir = argv[1];
  try {
    scangen::Tensor<float> smoothed = dsp::smooth({x.data(), {n}}, 0.25f);
    scangen::Module smooth = scangen::compile_file(dir + "/smooth.scan");
    std::vector<scangen::HostTensor> out = smooth.call("smooth", {scangen::view(x.data(), {n}), scangen::HostTensor::scalar(0.25f)});
    if (!same("smooth", smoothed.data(), out.at(0).data<float>(), n)) return 1;

    scangen::Tensor<float> clipped = dsp::leaky_clip({x.data(), {n}});
    scangen::JitOptions options;
    options.include_dirs = {dir + "/include"};
    scangen::Module clip = scangen::compile_file(dir + "/clip.scan", options);
    out = clip.call("leaky_clip", {scangen::view(x.data(), {n})});
    if (!same("clip", clipped.data(), out.at(0).data<float>(), n)) return 1;
    float largest = 0;
    for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(clipped.data()[i]));
    std::printf("clip: largest |y| = %g\n", double(largest));
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    return 1;
  }
  return 0;
}
