#include "support/large_stack.h"

#include <pthread.h>

namespace scangen {
namespace {

void* trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

}  // namespace

void run_with_large_stack(const std::function<void()>& body) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    body();
    return;
  }
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, kLargeStackBytes) == 0 &&
                 pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&body)) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    body();
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace scangen
