// consumer <smooth.scan>: calls the generated API of smooth.scan (built by scangen_add_library)
// and the same file JIT-compiled through <scangen/scangen.h>, and compares the bits.
#include <cmath>
#include <cstdio>
#include <vector>

#include <scangen/scangen.h>

#include "smooth.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer smooth.scan\n");
    return 2;
  }
  std::vector<float> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.1 * double(i)));
  const int64_t n = int64_t(x.size());
  try {
    scangen::Tensor<float> generated = dsp::smooth({x.data(), {n}}, 0.25f);
    scangen::Module jit = scangen::compile_file(argv[1]);
    std::vector<scangen::HostTensor> out = jit.call("smooth", {scangen::view(x.data(), {n}), scangen::HostTensor::scalar(0.25f)});
    const float* jitted = out.at(0).data<float>();
    for (int64_t i = 0; i < n; ++i)
      if (!(generated.data()[i] == jitted[i])) {
        std::printf("FAIL element %lld: generated %g, JIT %g\n", (long long)i, double(generated.data()[i]), double(jitted[i]));
        return 1;
      }
    std::printf("ok: generated and JIT agree on %lld elements (y[%lld] = %g)\n", (long long)n, (long long)n - 1,
                double(generated.data()[n - 1]));
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    return 1;
  }
  return 0;
}
