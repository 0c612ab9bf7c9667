// Shared pieces of the benchmarks.
#pragma once

#include <string>

#include "sched/enactor.hpp"
#include "sched/policy_host.hpp"

namespace sched::bench {

// An enactor that does nothing: the benchmarks measure decisions only.
class NullEnactor : public Enactor {
 public:
  void start(const Job&) override {}
  void resize(const Job&, const Resize&) override {}
  void stop(const Job&, StopReason) override {}
  void request_perf(const Job&) override {}
  void suspend(const Job&) override {}
  void resume(const Job&) override {}
};

inline std::string policy_path(const std::string& name) {
  return *resolve_policy_path(name, default_policy_dir());
}

inline std::string bench_policy_path(const std::string& name) {
  return std::string(SCHED_BENCH_DIR) + "/policies/" + name + ".lua";
}

}  // namespace sched::bench
