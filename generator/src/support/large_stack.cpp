#include "support/large_stack.h"

#include <pthread.h>

#include <condition_variable>
#include <mutex>

namespace scangen {
namespace {

// True on a thread whose stack is large already: a nested call runs in place.
thread_local bool on_large_stack = false;

void* trampoline(void* arg) {
  on_large_stack = true;
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

// Starts `body` on a new thread with a large stack and waits for it; false if none could start.
bool run_on_new_thread(const std::function<void()>& body) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, kLargeStackBytes) == 0 &&
                 pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&body)) == 0;
  pthread_attr_destroy(&attr);
  if (started) pthread_join(thread, nullptr);
  return started;
}

// One thread with a large stack that stays for the next call: a process that loads many programs
// (the tests, a fuzzer, the JIT API) would otherwise create and tear down a 1 GiB stack each
// time, which is slow under AddressSanitizer (it clears the stack's shadow at every exit).
class Worker {
 public:
  // Runs `body` on the worker; false when it is busy with another caller's call (or cannot start).
  bool try_run(const std::function<void()>& body) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || !start()) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &body;
    wake_.notify_all();
    wake_.wait(lock, [&] { return job_ == nullptr; });
    return true;
  }

 private:
  bool start() {
    if (started_) return true;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    pthread_t thread;
    started_ = pthread_attr_setstacksize(&attr, kLargeStackBytes) == 0 &&
               pthread_create(&thread, &attr, &Worker::loop, this) == 0;
    pthread_attr_destroy(&attr);
    if (started_) pthread_detach(thread);
    return started_;
  }

  static void* loop(void* self) {
    on_large_stack = true;
    auto& w = *static_cast<Worker*>(self);
    std::unique_lock<std::mutex> lock(w.mutex_);
    for (;;) {
      w.wake_.wait(lock, [&] { return w.job_ != nullptr; });
      (*w.job_)();  // with_large_stack's bodies catch everything they throw
      w.job_ = nullptr;
      w.wake_.notify_all();
    }
    return nullptr;
  }

  std::mutex busy_;   // held by the caller whose body the worker runs
  std::mutex mutex_;  // guards job_
  std::condition_variable wake_;
  const std::function<void()>* job_ = nullptr;
  bool started_ = false;
};

}  // namespace

void run_with_large_stack(const std::function<void()>& body) {
  if (on_large_stack) {
    body();
    return;
  }
  // Never destroyed: the worker may be waiting for work when the process exits.
  static Worker* worker = new Worker;
  if (worker->try_run(body) || run_on_new_thread(body)) return;
  body();
}

}  // namespace scangen
