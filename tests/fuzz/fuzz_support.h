// What the libFuzzer targets share: the one rule they check beside the sanitizers. A user error
// (a diagnostic, a RuntimeError) is a correct answer to a bad input; an internal error (a failed
// SCANGEN_CHECK, exit 70 in the CLI) or any other exception is a bug, reported as a crash so that
// libFuzzer saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "scangen/runtime/errors.h"

namespace scangen::fuzz {

[[noreturn]] inline void crash(const char* what, const char* message) {
  std::fprintf(stderr, "fuzz target: %s: %s\n", what, message);
  std::abort();
}

// Runs `body`; a RuntimeError (a user error) is fine, anything else thrown aborts.
template <class Body>
void expect_user_errors_only(Body&& body) {
  try {
    body();
  } catch (const RuntimeError&) {
  } catch (const InternalError& e) {
    crash("internal error", e.what());
  } catch (const std::exception& e) {
    crash("unexpected exception", e.what());
  }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace scangen::fuzz
