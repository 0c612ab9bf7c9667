#include "sched/sim/elastic_workload.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sched/constraints.hpp"

namespace sched::sim {
namespace {

// Separate streams for separate purposes: which jobs are malleable must not
// move when, say, the application models change.
constexpr std::uint64_t kModelStream = 0x6d6f64656cULL;     // "model"
constexpr std::uint64_t kSelectStream = 0x73656c656374ULL;  // "select"
constexpr std::uint64_t kCostStream = 0x636f7374ULL;        // "cost"

// A uniform draw from [0, 1) built from the top 53 bits, identical with
// every standard library (std::uniform_real_distribution is not).
double unit(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

double uniform(std::mt19937_64& engine, double lo, double hi) {
  return lo + (hi - lo) * unit(engine);
}

int uniform_int(std::mt19937_64& engine, int lo, int hi) {
  return lo + static_cast<int>(unit(engine) * (hi - lo + 1));
}

void check_fraction(double fraction, const std::string& what) {
  if (!(fraction >= 0 && fraction <= 1)) {
    throw WorkloadError(what + ": the malleable fraction must be in 0..1, not " +
                        std::to_string(fraction));
  }
}

// Workload indices in a seeded random order; the first k are the chosen ones.
std::vector<std::size_t> selection_order(std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  std::mt19937_64 engine(seed ^ kSelectStream);
  for (std::size_t i = count; i > 1; --i) {
    const auto j = static_cast<std::size_t>(unit(engine) * static_cast<double>(i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::size_t chosen_count(std::size_t jobs, double fraction) {
  return static_cast<std::size_t>(std::lround(fraction * static_cast<double>(jobs)));
}

}  // namespace

std::optional<EspModelOptions::Speedup> EspModelOptions::parse_speedup(const std::string& name) {
  if (name == "amdahl") return Speedup::Amdahl;
  if (name == "downey") return Speedup::Downey;
  if (name == "linear") return Speedup::Linear;
  return std::nullopt;
}

void model_esp_applications(Workload& workload, std::uint64_t seed, const EspModelOptions& model) {
  std::mt19937_64 engine(seed ^ kModelStream);
  for (WorkloadJob& job : workload.jobs) {
    // One draw per job for the speedup parameter whatever the model, so the
    // phases below are the same under every model.
    const double draw = unit(engine);
    SpeedupModel& speedup = job.model.speedup;
    switch (model.speedup) {
      case EspModelOptions::Speedup::Amdahl:
        speedup.kind = SpeedupModel::Kind::Amdahl;
        speedup.serial_fraction =
            std::exp(std::log(0.002) + (std::log(0.05) - std::log(0.002)) * draw);
        break;
      case EspModelOptions::Speedup::Downey:
        speedup.kind = SpeedupModel::Kind::Downey;
        speedup.downey_a = std::exp(std::log(8.0) + (std::log(128.0) - std::log(8.0)) * draw);
        speedup.downey_sigma = model.downey_sigma;
        break;
      case EspModelOptions::Speedup::Linear:
        speedup.kind = SpeedupModel::Kind::Linear;
        break;
    }
    job.model.adaptation = model.adaptation;
    job.model.phases.resize(8);
    for (double& phase : job.model.phases) phase = uniform(engine, 0.5, 1.5);
  }
}

void make_esp_malleable(Workload& workload, double fraction, std::uint64_t seed) {
  check_fraction(fraction, "esp");
  const int nodes = std::max(workload.nodes, 1);
  const auto order = selection_order(workload.jobs.size(), seed);
  const std::size_t count = chosen_count(order.size(), fraction);
  for (std::size_t k = 0; k < count; ++k) {
    JobSpec& spec = workload.jobs[order[k]].spec;
    const auto sizes = allowed_sizes(spec.constraint, 1, nodes);
    if (sizes.empty()) continue;  // no allowed size on this system: stays rigid
    spec.kind = JobKind::Malleable;
    spec.min_nodes = std::min(sizes.front(), spec.nodes);
    spec.max_nodes = std::max(sizes.back(), spec.nodes);
  }
}

void make_swf_elastic(Workload& workload, int cluster_nodes, double fraction, std::uint64_t seed) {
  SwfElasticOptions options;
  options.fraction = fraction;
  options.seed = seed;
  make_swf_elastic(workload, cluster_nodes, options);
}

void make_swf_elastic(Workload& workload, int cluster_nodes, const SwfElasticOptions& options) {
  check_fraction(options.fraction, "swf");
  if (!(options.malleable_share >= 0 && options.malleable_share <= 1)) {
    throw WorkloadError("swf: the malleable share must be in 0..1, not " +
                        std::to_string(options.malleable_share));
  }
  if (!(options.request_max_fraction > 0) || !std::isfinite(options.request_max_fraction)) {
    throw WorkloadError("swf: the evolving request fraction must be above 0, not " +
                        std::to_string(options.request_max_fraction));
  }
  if (options.cores_per_node < 1) throw WorkloadError("swf: cores per node must be at least 1");
  const int cap = std::max(cluster_nodes, 1);
  const auto order = selection_order(workload.jobs.size(), options.seed);
  const std::size_t count = chosen_count(order.size(), options.fraction);
  std::mt19937_64 engine(options.seed ^ kModelStream);
  std::mt19937_64 costs(options.seed ^ kCostStream);
  const double evolving_share = 1 - options.malleable_share;
  for (std::size_t k = 0; k < count; ++k) {
    WorkloadJob& job = workload.jobs[order[k]];
    JobSpec& spec = job.spec;
    // The k-th chosen job is evolving when it brings the evolving count
    // up: at a share of 0.5, every second one (k = 1, 3, ...).
    const auto before = std::floor(static_cast<double>(k) * evolving_share);
    const auto after = std::floor(static_cast<double>(k + 1) * evolving_share);
    const bool evolving = after > before;
    if (options.costs == SwfElasticOptions::Costs::PerProcessor) {
      // Per processor, as Lina et al. draw them; a node is cores_per_node
      // processors: α·Δp = (α·c)·Δn and β/p_total = (β/c)/(n_old + n_new).
      const double c = options.cores_per_node;
      AdaptationCost& cost = job.model.adaptation;
      cost = AdaptationCost{};
      cost.start_s_per_node = 0;
      cost.stop_s_per_node = 0;
      cost.alpha_s = uniform(costs, 0.005, 0.05) * c;
      cost.beta_s = uniform(costs, 0.005, 0.05) / c;
      const double latency = uniform(costs, 0.015, 0.1) + uniform(costs, 0.005, 0.05);
      cost.latency_expand_s = latency;
      cost.latency_shrink_s = latency;
    }
    spec.kind = evolving ? JobKind::Evolving : JobKind::Malleable;
    spec.constraint = NodeConstraint::None;
    spec.min_nodes = std::max(1, (spec.nodes + 1) / 2);
    spec.max_nodes = std::max(spec.nodes, std::min(cap, spec.nodes * 8));
    if (!evolving) continue;
    const int requests = uniform_int(engine, 1, 4);
    for (int r = 0; r < requests; ++r) {
      EvolvingStep step;
      step.op = unit(engine) < 0.8 ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink;
      const int most =
          options.request_max_fraction == 1
              ? spec.nodes
              : std::max(1,
                         static_cast<int>(std::lround(options.request_max_fraction * spec.nodes)));
      step.by = uniform_int(engine, 1, most);
      step.at_done = uniform(engine, 0.4, 0.7);  // 30–60% of the work left
      job.model.requests.push_back(step);
    }
    std::sort(job.model.requests.begin(), job.model.requests.end(),
              [](const EvolvingStep& a, const EvolvingStep& b) { return a.at_done < b.at_done; });
  }
}

}  // namespace sched::sim
