// The suite's two sizes (docs/testing.md, "What runs where"): the one CI runs, which fits its time
// budget, and the long run's (tests/run_long.sh sets SCANGEN_LONG_TESTS=1), with every random
// program count and every CUDA architecture at its full size. Each test takes its count from
// ci_or_long; its own variable (SCANGEN_EQUIVALENCE_PROGRAMS, ...) overrides both.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace scangen::testing {

inline bool long_tests() {
  const char* v = std::getenv("SCANGEN_LONG_TESTS");
  return v && *v && std::string(v) != "0";
}

inline int64_t ci_or_long(int64_t ci, int64_t long_run) { return long_tests() ? long_run : ci; }

}  // namespace scangen::testing
