#include "sched/driver.hpp"

#include <spdlog/spdlog.h>

#include "sched/engine.hpp"

namespace sched {

bool DeferredResults::feed(Engine& engine) {
  if (in_feed_ || queue_.empty()) return false;
  in_feed_ = true;
  feeding_.swap(queue_);  // what the results queue now goes to the next round
  try {
    for (Result& result : feeding_) result(engine);
  } catch (...) {
    feeding_.clear();
    in_feed_ = false;
    throw;
  }
  feeding_.clear();
  in_feed_ = false;
  return true;
}

bool settle(Engine& engine, DeferredResults& results, int max_rounds, std::string_view who) {
  for (int round = 0; round < max_rounds; ++round) {
    // Results first (a launch an adaptation's end made possible is confirmed
    // before the pass looks), then the pass they make due.
    const bool fed = results.feed(engine);
    const bool ran = engine.run_pass_if_due();
    if (!fed && !ran) {
      engine.check_power();
      return true;
    }
  }
  spdlog::error("{}: passes kept acting at t={} without settling; moving on", who, engine.now());
  engine.check_power();
  return false;
}

}  // namespace sched
