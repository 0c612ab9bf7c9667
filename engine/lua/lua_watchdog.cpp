#include "lua_watchdog.hpp"

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <vector>

namespace sched {

// The call (and its watch) running on this thread, for the signal handler.
thread_local CallWatch* t_running = nullptr;

void on_watch_signal(int /*sig*/) {
  CallWatch* watch = t_running;
  if (watch && (watch->calls_.load(std::memory_order_relaxed) & 1) != 0) watch->arm_(watch->L_);
}

namespace {

// A real-time signal nothing else of ours uses; glibc keeps the first ones.
int watch_signal() { return SIGRTMAX - 3; }

}  // namespace

class Watchdog {
 public:
  static Watchdog& instance() {
    // Never destroyed: the thread may outlive static destruction order.
    static Watchdog* watchdog = new Watchdog;
    return *watchdog;
  }

  void add(CallWatch* watch) {
    std::lock_guard lock(mutex_);
    watches_.push_back(watch);
    wake_locked();
  }

  void remove(CallWatch* watch) {
    std::lock_guard lock(mutex_);
    watches_.erase(std::remove(watches_.begin(), watches_.end(), watch), watches_.end());
  }

  // From begin(): a parked watchdog looks again (rare: after a quiet second).
  void nudge() {
    if (!parked_.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mutex_);
    wake_locked();
  }

 private:
  Watchdog() {
    struct sigaction action {};
    action.sa_handler = on_watch_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(watch_signal(), &action, nullptr);
    std::thread([this] { run(); }).detach();
  }

  void wake_locked() {
    parked_.store(false, std::memory_order_relaxed);
    wake_.notify_one();
  }

  void run() {
    std::unique_lock lock(mutex_);
    int quiet = 0;  // periods in a row with no call running
    for (;;) {
      if (quiet >= 50) {
        parked_.store(true, std::memory_order_relaxed);
        wake_.wait(lock, [this] { return !parked_.load(std::memory_order_relaxed); });
        quiet = 0;
      } else {
        wake_.wait_for(lock, CallWatch::kArmAfter);
      }
      bool running = false;
      for (CallWatch* watch : watches_) {
        const std::uint64_t calls = watch->calls_.load(std::memory_order_acquire);
        if ((calls & 1) != 0) {
          running = true;
          // Still the call of the last look: it has run a whole period.
          if (calls == watch->seen_) pthread_kill(watch->thread_, watch_signal());
        }
        watch->seen_ = calls;
      }
      quiet = running ? 0 : quiet + 1;
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<CallWatch*> watches_;
  std::atomic<bool> parked_{false};
};

CallWatch::CallWatch(lua_State* L, Arm arm) : L_(L), arm_(arm) { Watchdog::instance().add(this); }

CallWatch::~CallWatch() { Watchdog::instance().remove(this); }

void CallWatch::begin() {
  if (depth_++ > 0) return;
  thread_ = pthread_self();
  t_running = this;
  calls_.fetch_add(1, std::memory_order_release);  // thread_ is seen with it
  Watchdog::instance().nudge();
}

void CallWatch::end() {
  if (--depth_ > 0) return;
  calls_.fetch_add(1, std::memory_order_relaxed);
  t_running = nullptr;
}

}  // namespace sched
