// Internal invariants. A failed check is a bug in scangen, never a user error: it throws
// InternalError, which the CLI reports as "internal error" with exit status 70.
#pragma once

#include <string>

#include "scangen/runtime/errors.h"

namespace scangen {

[[noreturn]] void internal_error(const std::string& message, const char* file, int line);

}  // namespace scangen

#define SCANGEN_CHECK(cond, message)                                              \
  do {                                                                            \
    if (!(cond)) ::scangen::internal_error(std::string("check failed: ") + #cond + \
                                               ": " + (message), __FILE__, __LINE__); \
  } while (0)

#define SCANGEN_UNREACHABLE(message) ::scangen::internal_error(message, __FILE__, __LINE__)
