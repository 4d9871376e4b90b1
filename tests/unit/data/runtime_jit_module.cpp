// A hand-written module implementing the scangen C ABI, for the CPU JIT's unit tests. The tests
// put the text of templates/common/scangen_abi.h in front of it, as the generator does for
// emitted code (so the include below is skipped); it also compiles on its own with
// -I templates/common.
//
// Functions, written as a .scan signature would give them:
//   scale(x: f32[n], a: f32) -> f32[n]          returns data != owner to test ownership
//   stats(x: f64[n]) -> (f64, i64)              sum and count: two results
//   checked_half(k: i32) -> i32                 a user error at 3:7 for odd k
//   broken() -> i32                             an internal error
//   odd_status() -> i32                         an unknown status code
//   wrong_result() -> f32                       a result that breaks its declared dtype
#ifndef SCANGEN_ABI_H
#include "scangen_abi.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SCANGEN_TEST_ABI_VERSION
#define SCANGEN_TEST_ABI_VERSION SCANGEN_ABI_VERSION
#endif

namespace {

int32_t report(scangen_error* error, int32_t status, int32_t line, int32_t column,
               const char* message) {
  error->line = line;
  error->column = column;
  snprintf(error->message, sizeof error->message, "%s", message);
  return status;
}

// A result of `count` elements of `size` bytes, owned by a block that starts 64 bytes earlier.
void* allocate_result(scangen_tensor* result, int32_t dtype, int32_t rank, const int64_t* shape,
                      size_t count, size_t size) {
  char* owner = static_cast<char*>(malloc(64 + count * size));
  if (!owner) return nullptr;
  result->owner = owner;
  result->data = owner + 64;
  result->rank = rank;
  result->dtype = dtype;
  for (int32_t d = 0; d < rank; ++d) result->shape[d] = shape[d];
  return result->data;
}

int32_t scale(const scangen_tensor* args, int32_t, scangen_tensor* results, int32_t,
              scangen_error* error) {
  int64_t n = args[0].shape[0];
  const float* x = static_cast<const float*>(args[0].data);
  float a = *static_cast<const float*>(args[1].data);
  float* y = static_cast<float*>(
      allocate_result(&results[0], SCANGEN_DTYPE_F32, 1, &n, size_t(n), sizeof(float)));
  if (!y) return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "out of memory");
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a;
  return SCANGEN_OK;
}

int32_t stats(const scangen_tensor* args, int32_t, scangen_tensor* results, int32_t,
              scangen_error* error) {
  int64_t n = args[0].shape[0];
  const double* x = static_cast<const double*>(args[0].data);
  double* sum = static_cast<double*>(
      allocate_result(&results[0], SCANGEN_DTYPE_F64, 0, nullptr, 1, sizeof(double)));
  if (!sum) return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "out of memory");
  int64_t* count = static_cast<int64_t*>(
      allocate_result(&results[1], SCANGEN_DTYPE_I64, 0, nullptr, 1, sizeof(int64_t)));
  if (!count) {
    free(results[0].owner);
    return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "out of memory");
  }
  *sum = 0;
  for (int64_t i = 0; i < n; ++i) *sum += x[i];
  *count = n;
  return SCANGEN_OK;
}

int32_t checked_half(const scangen_tensor* args, int32_t, scangen_tensor* results, int32_t,
                     scangen_error* error) {
  int32_t k = *static_cast<const int32_t*>(args[0].data);
  if (k % 2 != 0) return report(error, SCANGEN_USER_ERROR, 3, 7, "k must be even");
  int32_t* half = static_cast<int32_t*>(
      allocate_result(&results[0], SCANGEN_DTYPE_I32, 0, nullptr, 1, sizeof(int32_t)));
  if (!half) return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "out of memory");
  *half = k / 2;
  return SCANGEN_OK;
}

int32_t broken(const scangen_tensor*, int32_t, scangen_tensor*, int32_t, scangen_error* error) {
  return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "loop bound invariant failed");
}

int32_t odd_status(const scangen_tensor*, int32_t, scangen_tensor*, int32_t, scangen_error*) {
  return 42;
}

int32_t wrong_result(const scangen_tensor*, int32_t, scangen_tensor* results, int32_t,
                     scangen_error* error) {
  if (!allocate_result(&results[0], SCANGEN_DTYPE_I32, 0, nullptr, 1, sizeof(int32_t)))
    return report(error, SCANGEN_INTERNAL_ERROR, 0, 0, "out of memory");
  return SCANGEN_OK;
}

const int32_t kScaleArgDtypes[] = {SCANGEN_DTYPE_F32, SCANGEN_DTYPE_F32};
const int32_t kScaleArgRanks[] = {1, 0};
const int32_t kScaleResultDtypes[] = {SCANGEN_DTYPE_F32};
const int32_t kScaleResultRanks[] = {1};
const int32_t kStatsArgDtypes[] = {SCANGEN_DTYPE_F64};
const int32_t kStatsArgRanks[] = {1};
const int32_t kStatsResultDtypes[] = {SCANGEN_DTYPE_F64, SCANGEN_DTYPE_I64};
const int32_t kStatsResultRanks[] = {0, 0};
const int32_t kI32[] = {SCANGEN_DTYPE_I32};
const int32_t kF32[] = {SCANGEN_DTYPE_F32};
const int32_t kScalar[] = {0};

const scangen_function_info kFunctions[] = {
    {"scale", "(x: f32[n], a: f32) -> f32[n]", scale, 2, 1, kScaleArgDtypes, kScaleArgRanks,
     kScaleResultDtypes, kScaleResultRanks},
    {"stats", "(x: f64[n]) -> (f64, i64)", stats, 1, 2, kStatsArgDtypes, kStatsArgRanks,
     kStatsResultDtypes, kStatsResultRanks},
    {"checked_half", "(k: i32) -> i32", checked_half, 1, 1, kI32, kScalar, kI32, kScalar},
    {"broken", "() -> i32", broken, 0, 1, nullptr, nullptr, kI32, kScalar},
    {"odd_status", "() -> i32", odd_status, 0, 1, nullptr, nullptr, kI32, kScalar},
    {"wrong_result", "() -> f32", wrong_result, 0, 1, nullptr, nullptr, kF32, kScalar},
};

const scangen_module_info kModule = {SCANGEN_TEST_ABI_VERSION, "runtime_jit_module.scan",
                                     static_cast<int32_t>(sizeof kFunctions / sizeof kFunctions[0]),
                                     kFunctions};

}  // namespace

#ifdef SCANGEN_EMIT_MODULE_ABI
extern "C" __attribute__((visibility("default"))) const scangen_module_info* scangen_module_v1(
    void) {
  return &kModule;
}
#endif
