#include "sched/env.hpp"

#include <chrono>

namespace sched {
namespace {

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double ManualClock::monotonic() const { return steady_seconds(); }

double SystemClock::now() const {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

double SystemClock::monotonic() const { return steady_seconds(); }

}  // namespace sched
