#include "scangen/runtime/errors.h"

#include <utility>

namespace scangen {

RuntimeError::RuntimeError(std::string message, int line, int column)
    : std::runtime_error(std::move(message)), line_(line), column_(column) {}

InternalError::InternalError(std::string message) : std::runtime_error(std::move(message)) {}

}  // namespace scangen
