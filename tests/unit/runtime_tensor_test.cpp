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
  BOOST_CHECK_THROW(HostTensor(DType::F64, {int64_t(1) << 40, int64_t(1) << 40}), std::length_error);
}
