// Arms a Lua state's count hook only once a call into it has run for a
// while (issue 15). With a count hook set, Lua 5.4 traps every VM
// instruction whatever the count: about a tenth of a fast pass. A call
// shorter than kArmAfter never pays for it; a longer one (a looping or very
// heavy policy) is counted from then on, and stopped at its bounds as
// before. One process-wide thread watches every state; it signals the
// thread of a call that is still the same call one period later, and the
// signal handler sets the hook there, as the Lua interpreter itself does
// for Ctrl-C. Private to the engine library.
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <lua.hpp>

namespace sched {

class CallWatch {
 public:
  // How long a call runs before its count hook is set (one to two periods).
  static constexpr std::chrono::milliseconds kArmAfter{20};

  // `arm` runs on the calling thread, inside a signal handler: it may only
  // call lua_sethook on the state.
  using Arm = void (*)(lua_State* L);
  CallWatch(lua_State* L, Arm arm);
  ~CallWatch();
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;

  // A call into the state starts (or ends) on this thread. Nested calls
  // count as one.
  void begin();
  void end();

 private:
  friend class Watchdog;
  friend void on_watch_signal(int);

  lua_State* L_;
  Arm arm_;
  int depth_ = 0;
  pthread_t thread_{};
  // Odd while a call runs; each begin and end adds one.
  std::atomic<std::uint64_t> calls_{0};
  std::uint64_t seen_ = 0;  // the watchdog's last look (under its lock)
};

}  // namespace sched
