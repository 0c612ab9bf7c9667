// The power meter interface (docs/design.md §2): the node agent measures its node's
// power through a plugin loaded by name at run time (loader.hpp). A plugin is
// a shared object, libsched_power_<name>.so, that exports one C function,
// sched_power_meter_create, so that dlsym finds it under a plain name.
//
// The host and its plugins share C++ objects (this class, strings, vectors),
// so both must be built with the same compiler and standard library; the ABI
// version catches a plugin built against another version of this header.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched::plugins {

using JobId = std::int64_t;  // the engine's job id
using SteadyTime = std::chrono::steady_clock::time_point;

// Raised whenever PowerContext, PowerSample or PowerMeter change shape.
inline constexpr int kPowerMeterAbi = 1;

struct JobWatts {
  JobId job = 0;
  double watts = 0;
};

// What the agent knows at the time of a sample.
struct PowerContext {
  // For meters that scale with load; neither rapl nor model needs them.
  int busy_cores = 0;  // cores running job processes
  int cores = 0;       // all cores of this node
  // The jobs on this node, each with its per-node watts estimate (the job's
  // power_max_w; 0 when it gave none).
  std::vector<JobWatts> jobs;
  double idle_w = 71;  // what this node draws with no job (the agent's options)
};

struct PowerSample {
  double node_w = 0;
  bool measured = false;  // true: hardware counters; false: a model
  // node_w split over ctx.jobs, in the same order (empty when no job): what
  // power.report sends as jobs_w. The split is the meter's, because a meter
  // that can measure jobs apart knows better than an estimate.
  std::vector<JobWatts> jobs_w;
};

class PowerMeter {
 public:
  virtual ~PowerMeter() = default;

  // Short and stable ("rapl", "model"): power.report's source.
  virtual std::string name() const = 0;

  // The average power since the previous call that returned a sample; `now`
  // comes from the caller, a meter never reads a clock. Nothing when there is
  // no interval to average over (a counter meter's first call, no time passed
  // since the previous call) or the hardware could not be read; last_error()
  // then says why.
  virtual std::optional<PowerSample> sample(const PowerContext& ctx, SteadyTime now) noexcept = 0;

  // Why the latest sample() returned nothing; empty after it returned a sample.
  virtual std::string last_error() const = 0;
};

}  // namespace sched::plugins

#define SCHED_PLUGIN_EXPORT __attribute__((visibility("default")))

// Every plugin defines this. Returns a new meter configured by `options`
// (the plugin's "key=value,key=value" text, may be empty), which the caller
// deletes; or nullptr with a message in `error` (always NUL-terminated,
// truncated to error_size) when abi is not kPowerMeterAbi, the options are
// wrong or the meter cannot work on this machine. Never throws.
extern "C" SCHED_PLUGIN_EXPORT sched::plugins::PowerMeter* sched_power_meter_create(
    int abi, const char* options, char* error, std::size_t error_size);
