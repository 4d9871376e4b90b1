// A Boost.Test precondition for tests that need NVRTC: skips them, with the reason in the log,
// where no NVRTC can be loaded.
#pragma once

#include <boost/test/unit_test.hpp>
#include <string>

#include "scangen/runtime/cuda.h"

namespace scangen::testing {

inline boost::test_tools::assertion_result nvrtc_found(boost::unit_test::test_unit_id) {
  std::string why;
  if (nvrtc_available(&why)) return true;
  boost::test_tools::assertion_result result(false);
  result.message() << "no NVRTC here: " << why;
  return result;
}

}  // namespace scangen::testing
