#define BOOST_TEST_MODULE runtime_tensor
#include <boost/test/unit_test.hpp>

#include "scangen/runtime/tensor.h"

using namespace scangen;

BOOST_AUTO_TEST_CASE(zero_filled_and_shaped) {
  HostTensor t(DType::F32, {2, 3});
  BOOST_TEST(t.numel() == 6);
  BOOST_TEST(t.nbytes() == 24u);
  for (int64_t i = 0; i < t.numel(); ++i) BOOST_TEST(t.data<float>()[i] == 0.0f);
  BOOST_TEST(shape_to_string(t.shape()) == "[2, 3]");
}

BOOST_AUTO_TEST_CASE(scalar_and_vector_factories) {
  HostTensor s = HostTensor::scalar<int32_t>(7);
  BOOST_TEST(s.rank() == 0);
  BOOST_TEST(s.get_as_int64(0) == 7);
  HostTensor v = HostTensor::from_vector<double>({1.5, 2.5}, {2});
  BOOST_TEST(v.get_as_double(1) == 2.5);
  BOOST_CHECK_THROW(HostTensor::from_vector<double>({1.0}, {2}), std::length_error);
}

BOOST_AUTO_TEST_CASE(copies_share_and_clones_do_not) {
  HostTensor a = HostTensor::from_vector<int64_t>({1, 2, 3, 4}, {4});
  HostTensor b = a;
  HostTensor c = a.clone();
  a.data<int64_t>()[0] = 9;
  BOOST_TEST(b.data<int64_t>()[0] == 9);
  BOOST_TEST(c.data<int64_t>()[0] == 1);
  BOOST_TEST(!identical(a, c));
  BOOST_TEST(identical(a.reshaped({2, 2}).reshaped({4}), b));
  BOOST_CHECK_THROW(a.reshaped({3}), std::length_error);
}

BOOST_AUTO_TEST_CASE(rejects_bad_shapes) {
  BOOST_CHECK_THROW(HostTensor(DType::F64, {-1}), std::length_error);
  BOOST_CHECK_THROW(HostTensor(DType::F64, {0, -1}), std::length_error);
  BOOST_CHECK_THROW(HostTensor(DType::F64, {int64_t(1) << 40, int64_t(1) << 40}), AllocationError);
}

// Sizes are checked against kMaxTensorBytes without overflowing (issue 12: 4611686018427387900
// f32 elements are 2^64 - 16 bytes, and rounding that up to 64 wrapped to a small allocation).
BOOST_AUTO_TEST_CASE(sizes_beyond_the_limit) {
  BOOST_TEST(kMaxTensorBytes == int64_t(1) << 62);
  BOOST_TEST(tensor_bytes(DType::F32, {}).value() == 4);
  BOOST_TEST(tensor_bytes(DType::F32, {2, 3}).value() == 24);
  BOOST_TEST(tensor_bytes(DType::Bool, {kMaxTensorBytes}).value() == kMaxTensorBytes);
  BOOST_TEST(!tensor_bytes(DType::Bool, {kMaxTensorBytes + 1}));
  BOOST_TEST(tensor_bytes(DType::F64, {int64_t(1) << 59}).value() == kMaxTensorBytes);
  BOOST_TEST(!tensor_bytes(DType::F64, {(int64_t(1) << 59) + 1}));
  BOOST_TEST(!tensor_bytes(DType::F32, {4611686018427387900}));
  BOOST_TEST(!tensor_bytes(DType::I32, {int64_t(1) << 32, int64_t(1) << 32}));        // 2^64 elements
  BOOST_TEST(!tensor_bytes(DType::I64, {int64_t(1) << 62, int64_t(1) << 62, 2}));     // overflows twice
  // A zero dimension: no elements, however large the others.
  BOOST_TEST(tensor_bytes(DType::F32, {int64_t(1) << 62, int64_t(1) << 62, 0}).value() == 0);
  BOOST_TEST(shape_numel({int64_t(1) << 62, int64_t(1) << 62, 0}) == 0);
  HostTensor empty(DType::F32, {int64_t(1) << 62, int64_t(1) << 62, 0});
  BOOST_TEST(empty.numel() == 0);
  try {
    HostTensor t(DType::F32, {4611686018427387900});
    BOOST_FAIL("allocated more than kMaxTensorBytes");
  } catch (const AllocationError& e) {
    BOOST_TEST(std::string(e.what()) == "cannot allocate a tensor (f32[4611686018427387900], more than 4611686018427387904 bytes)");
    RuntimeError at = e.located("the value", 3, 7);
    BOOST_TEST(std::string(at.what()) == "cannot allocate the value (f32[4611686018427387900], more than 4611686018427387904 bytes)");
    BOOST_TEST(at.line() == 3);
    BOOST_TEST(at.column() == 7);
  }
}

BOOST_AUTO_TEST_CASE(allocation_failure_names_the_bytes) {
  BOOST_TEST(allocation_failure("the rows of 'x'", DType::I64, {1024, 3}, 24576) ==
             "cannot allocate the rows of 'x' (i64[1024, 3], 24576 bytes)");
  // Within the limit but more than any memory: the allocation itself fails, with the exact bytes.
  try {
    HostTensor t(DType::F64, {int64_t(1) << 58});
    BOOST_FAIL("allocated 2^61 bytes");
  } catch (const AllocationError& e) {
    BOOST_TEST(std::string(e.what()) == "cannot allocate a tensor (f64[288230376151711744], 2305843009213693952 bytes)");
  }
}
