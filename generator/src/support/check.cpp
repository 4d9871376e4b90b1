#include "support/check.h"

namespace scangen {

void internal_error(const std::string& message, const char* file, int line) {
  std::string where = file;
  // Keep the path relative to the source tree so that messages do not depend on the build machine.
  auto pos = where.find("generator/");
  if (pos != std::string::npos) where = where.substr(pos);
  throw InternalError(message + " (" + where + ":" + std::to_string(line) + ")");
}

}  // namespace scangen
