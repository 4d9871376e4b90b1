// The associative scans of the CUDA kernels (templates/cuda/scangen_cuda_scan.h) compile with
// NVRTC, as the JIT compiles kernels (-std=c++17 --fmad=false), to CUBIN for every architecture
// this NVRTC supports from Volta on (in CI the oldest, sm_80, sm_90 and the newest), with an
// empty log: no warning from NVRTC or ptxas. Every operator, in a kernel of its own and in one
// that asks for every resident thread (__launch_bounds__ with SCANGEN_CUDA_LANE_BLOCKS, as lanes
// kernels do): for f32, f64, i32 and i64 on sm_90 (and sm_80 in the long run), for f32 on the
// others (all four everywhere took minutes on two cores). Skipped where no NVRTC loads.
#define BOOST_TEST_MODULE cuda_scan_nvrtc
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "common/test_scope.h"
#include "nvrtc_found.h"
#include "scangen/runtime/cuda.h"

namespace utf = boost::unit_test;
using scangen::testing::nvrtc_found;

namespace {

std::string template_text(const std::string& relative) {
  std::ifstream in(std::string(SCANGEN_SOURCE_DIR) + "/templates/" + relative);
  BOOST_REQUIRE_MESSAGE(in, "cannot read templates/" << relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A kernel per element type calling the seven helpers on the launch's first tensors, with
// thresholds and strides from run-time values (nothing folds away), in the order generated
// kernels embed the headers.
std::string kernels_source() {
  std::string source = template_text("cuda/scangen_cuda_abi.h") + template_text("common/scangen_scalar.h") +
                       template_text("cuda/scangen_cuda_device.h") + template_text("cuda/scangen_cuda_scan.h");
  source += R"(
namespace sgc = scangen_cuda_v1;
template <class T>
__device__ void every_scan(scangen_cuda_launch* launch, scangen_cuda_tensor* tensors) {
  sgc::Context ctx(launch, tensors);
  T* out = (T*)tensors[0].data;
  const T* x = sgc::tensor_arg<T>(tensors[1]);
  T* scratch = (T*)tensors[2].data;
  const long long* s = tensors[3].shape;  // rows, step, lane, steps, lanes, thresholds
  sgc::scan_affine(ctx, out, s[0], x, x + 1, s[1], s[2], x + 2, -s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_add_mul(ctx, out, s[0], x, x + 1, s[1], s[2], x + 2, -s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_add(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_mul(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_max(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_min(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_max_new_first(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  sgc::scan_min_new_first(ctx, out, s[0], x, x, 0, 0, x + 2, s[1], s[2], s[3], s[4], s[5], s[6], s[7], scratch);
  ctx.finish();
}
#define SCAN_KERNELS(T, name)                                                                                 \
  extern "C" __global__ void scans_##name(scangen_cuda_launch* l, scangen_cuda_tensor* t) { every_scan<T>(l, t); } \
  extern "C" __global__ void __launch_bounds__(SCANGEN_CUDA_BLOCK_THREADS, SCANGEN_CUDA_LANE_BLOCKS)                \
      scans_bounded_##name(scangen_cuda_launch* l, scangen_cuda_tensor* t) { every_scan<T>(l, t); }
SCAN_KERNELS(float, f32)
#ifdef SCAN_EVERY_TYPE
SCAN_KERNELS(double, f64)
SCAN_KERNELS(int, i32)
SCAN_KERNELS(long long, i64)
#endif
)";
  return source;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_operator_compiles_for_every_architecture, *utf::precondition(nvrtc_found)) {
  const std::string source = kernels_source();
  std::vector<int> archs;
  for (int arch : scangen::nvrtc_info().supported_archs)
    if (arch >= 70) archs.push_back(arch);  // scangen's kernels refuse architectures before Volta
  for (int required : {80, 90})
    BOOST_TEST((std::find(archs.begin(), archs.end(), required) != archs.end()), "NVRTC cannot compile for sm_" << required);
  // In CI the oldest, sm_80, sm_90 and the newest; every one in the long run (docs/testing.md).
  if (!scangen::testing::long_tests() && !archs.empty()) {
    const int oldest = archs.front(), newest = archs.back();
    archs.erase(std::remove_if(archs.begin(), archs.end(),
                               [&](int a) { return a != oldest && a != newest && a != 80 && a != 90; }),
                archs.end());
  }
  for (int arch : archs) {
    BOOST_TEST_CONTEXT("sm_" << arch) {
      scangen::CudaCompileOptions options;
      options.arch = arch;
      options.kind = scangen::CudaBinaryKind::Cubin;
      options.allow_ptx_fallback = false;
      // Every type on sm_90 (and sm_80 in the long run), f32 elsewhere.
      if (arch == 90 || (arch == 80 && scangen::testing::long_tests())) options.options.push_back("-DSCAN_EVERY_TYPE");
      const scangen::CudaBinary binary = scangen::nvrtc_compile(source, options);
      BOOST_TEST(binary.log.empty(), "NVRTC or ptxas warned:\n" << binary.log);
      BOOST_TEST(!binary.image.empty());
    }
  }
}
