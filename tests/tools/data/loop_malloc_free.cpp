// Rule (b): C allocation functions and explicit operator new/delete calls in a time loop
// (here an inner time loop named step_1, nested in an ordinary loop).
#include <cstdint>
#include <cstdlib>
#include <new>

void scan_buffers(const double* x, double* y, int64_t n, int64_t batches) {
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t step_1 = 0; step_1 < n; ++step_1) {
      auto* a = static_cast<double*>(std::malloc(sizeof(double)));  // EXPECT: loop-hygiene: call to 'malloc'
      void* raw = ::operator new(sizeof(double));  // EXPECT: loop-hygiene: call to 'operator new'
      *a = x[step_1];
      y[b * n + step_1] = *a;
      ::operator delete(raw);  // EXPECT: loop-hygiene: call to 'operator delete'
      free(a);  // EXPECT: loop-hygiene: call to 'free'
    }
  }
}
