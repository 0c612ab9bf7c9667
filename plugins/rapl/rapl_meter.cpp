// libsched_power_rapl.so: the node's power from the RAPL energy counters
// (rapl_zones.hpp), as Δenergy / Δt between two samples.
// Options: root=DIR, the powercap tree (default /sys/class/powercap; tests
// give a fake one). Fails to start unless every zone it would sum is
// readable (energy_uj is root-only since Linux 5.10): a partial sum would
// report a node that draws less than it does.
#include <chrono>
#include <exception>
#include <stdexcept>

#include "rapl_zones.hpp"
#include "sched/plugins/plugin_factory.hpp"
#include "sched/plugins/plugin_options.hpp"
#include "sched/plugins/power_shares.hpp"

namespace sched::plugins {
namespace {

constexpr const char* kDefaultRoot = "/sys/class/powercap";

class RaplMeter final : public PowerMeter {
 public:
  explicit RaplMeter(const std::string& options) {
    const PluginOptions parsed = parse_plugin_options(options, {"root"});
    const auto root = parsed.find("root");
    zones_ = rapl::find_zones(root != parsed.end() ? root->second : kDefaultRoot);
    std::string error;
    if (!read_all(last_uj_, &error)) throw std::runtime_error(error);
  }

  std::string name() const override { return "rapl"; }

  std::optional<PowerSample> sample(const PowerContext& ctx, SteadyTime now) noexcept override {
    try {
      return measure(ctx, now);
    } catch (const std::exception& e) {
      error_ = e.what();
      return std::nullopt;
    }
  }

  std::string last_error() const override { return error_; }

 private:
  std::optional<PowerSample> measure(const PowerContext& ctx, SteadyTime now) {
    // The first reading at construction has no time: intervals start here.
    if (!last_time_) {
      std::vector<std::uint64_t> now_uj;
      if (!read_all(now_uj, &error_)) return std::nullopt;
      last_uj_ = std::move(now_uj);
      last_time_ = now;
      error_ = "first reading: no interval to average over yet";
      return std::nullopt;
    }
    const double seconds = std::chrono::duration<double>(now - *last_time_).count();
    if (seconds <= 0) {
      error_ = "no time passed since the previous sample";
      return std::nullopt;
    }
    std::vector<std::uint64_t> now_uj;
    if (!read_all(now_uj, &error_)) {
      last_time_.reset();  // start again from the next good reading
      return std::nullopt;
    }
    std::uint64_t energy_uj = 0;
    for (std::size_t i = 0; i < zones_.size(); ++i) {
      const auto delta = rapl::energy_delta_uj(last_uj_[i], now_uj[i], zones_[i].max_uj);
      if (!delta) {
        error_ = zones_[i].id + ": the counter went backwards beyond its range (" +
                 std::to_string(zones_[i].max_uj) + " uJ)";
        last_uj_ = std::move(now_uj);
        last_time_ = now;
        return std::nullopt;
      }
      energy_uj += *delta;
    }
    last_uj_ = std::move(now_uj);
    last_time_ = now;
    error_.clear();
    PowerSample out;
    out.node_w = static_cast<double>(energy_uj) * 1e-6 / seconds;
    out.measured = true;
    out.jobs_w = split_over_jobs(out.node_w, ctx, ctx.idle_w);
    return out;
  }

  bool read_all(std::vector<std::uint64_t>& out, std::string* error) const {
    out.clear();
    for (const rapl::Zone& zone : zones_) {
      const auto value = rapl::read_energy_uj(zone, error);
      if (!value) return false;
      out.push_back(*value);
    }
    return true;
  }

  std::vector<rapl::Zone> zones_;
  std::vector<std::uint64_t> last_uj_;
  std::optional<SteadyTime> last_time_;
  std::string error_;
};

}  // namespace
}  // namespace sched::plugins

extern "C" SCHED_PLUGIN_EXPORT sched::plugins::PowerMeter* sched_power_meter_create(
    int abi, const char* options, char* error, std::size_t error_size) {
  return sched::plugins::create_meter<sched::plugins::RaplMeter>(abi, options, error, error_size);
}
