// The two kinds of errors the runtime reports. The CLI maps RuntimeError to exit status 1 and
// InternalError to exit status 70 (EX_SOFTWARE), so every failure is classified at its source.
#pragma once

#include <stdexcept>
#include <string>

namespace scangen {

// A problem the user can fix: a bad argument, a shape mismatch, an unreadable file, a missing
// compiler. Errors raised by a .scan program carry the location (1-based) of the construct that
// failed; line() == 0 means no location.
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(std::string message, int line = 0, int column = 0);

  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  bool has_location() const noexcept { return line_ > 0; }

 private:
  int line_;
  int column_;
};

// A scangen bug: emitted code that does not compile, a module that breaks the ABI contract, a
// failed invariant. The message should help the person filing the bug report.
class InternalError : public std::runtime_error {
 public:
  explicit InternalError(std::string message);
};

}  // namespace scangen
