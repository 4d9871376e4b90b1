// Runs a function on a thread with a large stack and returns its result (or rethrows its
// exception). The frontend, the interpreter and the lowering walk program trees and graphs
// recursively; their depth grows with the program (a chain of 100k lets), so they run on a stack
// sized for that rather than the main thread's 8 MB. The stack is reserved address space; only
// what is used is committed.
#pragma once

#include <exception>
#include <functional>
#include <optional>

namespace scangen {

inline constexpr size_t kLargeStackBytes = size_t(1) << 30;  // 1 GiB of address space

// Calls `body` on a thread with a large stack: a worker kept for the next call, a new thread when
// the worker is busy with another caller, the current thread when that one has a large stack
// already (a nested call) or no thread can be created. `body` must not throw.
void run_with_large_stack(const std::function<void()>& body);

template <class F> auto with_large_stack(F&& f) -> decltype(f()) {
  using R = decltype(f());
  std::optional<R> result;
  std::exception_ptr error;
  run_with_large_stack([&] {
    try {
      result.emplace(f());
    } catch (...) {
      error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace scangen
