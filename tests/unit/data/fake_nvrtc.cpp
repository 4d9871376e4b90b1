// A stand-in for libnvrtc that reports the version FAKE_NVRTC_MAJOR.FAKE_NVRTC_MINOR (set when it
// is built) and compiles nothing: for tests of how the runtime chooses among NVRTC libraries of
// several CUDA versions (tests/unit/CMakeLists.txt builds it under the names the runtime looks for).
#include <cstddef>

#ifndef FAKE_NVRTC_MAJOR
#error "FAKE_NVRTC_MAJOR and FAKE_NVRTC_MINOR (the version to report) must be defined"
#endif

namespace {
using nvrtcResult = int;
constexpr nvrtcResult kSuccess = 0;
constexpr nvrtcResult kInternalError = 11;  // NVRTC_ERROR_INTERNAL_ERROR: every compile fails
constexpr int kArchs[] = {75, 80, 86, 90};
}  // namespace

extern "C" {

const char* nvrtcGetErrorString(nvrtcResult result) {
  return result == kSuccess ? "NVRTC_SUCCESS" : "NVRTC_ERROR_INTERNAL_ERROR (fake NVRTC)";
}

nvrtcResult nvrtcVersion(int* major, int* minor) {
  *major = FAKE_NVRTC_MAJOR;
  *minor = FAKE_NVRTC_MINOR;
  return kSuccess;
}

nvrtcResult nvrtcGetNumSupportedArchs(int* count) {
  *count = static_cast<int>(sizeof kArchs / sizeof kArchs[0]);
  return kSuccess;
}

nvrtcResult nvrtcGetSupportedArchs(int* archs) {
  for (int arch : kArchs) *archs++ = arch;
  return kSuccess;
}

nvrtcResult nvrtcCreateProgram(void**, const char*, const char*, int, const char* const*, const char* const*) {
  return kInternalError;
}
nvrtcResult nvrtcDestroyProgram(void**) { return kSuccess; }
nvrtcResult nvrtcCompileProgram(void*, int, const char* const*) { return kInternalError; }
nvrtcResult nvrtcGetProgramLogSize(void*, std::size_t*) { return kInternalError; }
nvrtcResult nvrtcGetProgramLog(void*, char*) { return kInternalError; }
nvrtcResult nvrtcGetPTXSize(void*, std::size_t*) { return kInternalError; }
nvrtcResult nvrtcGetPTX(void*, char*) { return kInternalError; }
nvrtcResult nvrtcGetCUBINSize(void*, std::size_t*) { return kInternalError; }
nvrtcResult nvrtcGetCUBIN(void*, char*) { return kInternalError; }

}  // extern "C"
