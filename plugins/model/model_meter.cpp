// libsched_power_model.so: the node's power from the power model
// (power_shares.hpp) where no counter measures it. The model is of the
// present: a sample describes the jobs the agent has now, not an average.
// Options: idle_w=W, what this node draws idle, overriding the agent's
// idle_w in the context (for a node that differs from the rest).
#include <algorithm>
#include <stdexcept>

#include "sched/plugins/plugin_factory.hpp"
#include "sched/plugins/plugin_options.hpp"
#include "sched/plugins/power_shares.hpp"

namespace sched::plugins {
namespace {

class ModelMeter final : public PowerMeter {
 public:
  explicit ModelMeter(const std::string& options) {
    const PluginOptions parsed = parse_plugin_options(options, {"idle_w"});
    if (parsed.contains("idle_w")) {
      idle_w_ = option_number(parsed, "idle_w", 0);
      if (*idle_w_ < 0) throw std::invalid_argument("option idle_w must not be negative");
    }
  }

  std::string name() const override { return "model"; }

  std::optional<PowerSample> sample(const PowerContext& ctx, SteadyTime) noexcept override {
    const double idle_w = idle_w_.value_or(std::max(0.0, ctx.idle_w));
    PowerSample out;
    out.node_w = model_node_watts(ctx, idle_w);
    out.measured = false;
    out.jobs_w = split_over_jobs(out.node_w, ctx, idle_w);
    return out;
  }

  std::string last_error() const override { return {}; }

 private:
  std::optional<double> idle_w_;
};

}  // namespace
}  // namespace sched::plugins

extern "C" SCHED_PLUGIN_EXPORT sched::plugins::PowerMeter* sched_power_meter_create(
    int abi, const char* options, char* error, std::size_t error_size) {
  return sched::plugins::create_meter<sched::plugins::ModelMeter>(abi, options, error, error_size);
}
