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

void model_esp_applications(Workload& workload, std::uint64_t seed) {
  std::mt19937_64 engine(seed ^ kModelStream);
  for (WorkloadJob& job : workload.jobs) {
    job.model.speedup.kind = SpeedupModel::Kind::Amdahl;
    job.model.speedup.serial_fraction = std::exp(uniform(engine, std::log(0.002), std::log(0.05)));
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
  check_fraction(fraction, "swf");
  const int cap = std::max(cluster_nodes, 1);
  const auto order = selection_order(workload.jobs.size(), seed);
  const std::size_t count = chosen_count(order.size(), fraction);
  std::mt19937_64 engine(seed ^ kModelStream);
  for (std::size_t k = 0; k < count; ++k) {
    WorkloadJob& job = workload.jobs[order[k]];
    JobSpec& spec = job.spec;
    const bool evolving = k % 2 == 1;
    spec.kind = evolving ? JobKind::Evolving : JobKind::Malleable;
    spec.constraint = NodeConstraint::None;
    spec.min_nodes = std::max(1, (spec.nodes + 1) / 2);
    spec.max_nodes = std::max(spec.nodes, std::min(cap, spec.nodes * 8));
    if (!evolving) continue;
    const int requests = uniform_int(engine, 1, 4);
    for (int r = 0; r < requests; ++r) {
      EvolvingStep step;
      step.op = unit(engine) < 0.8 ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink;
      step.by = uniform_int(engine, 1, spec.nodes);
      step.at_done = uniform(engine, 0.4, 0.7);  // 30–60% of the work left
      job.model.requests.push_back(step);
    }
    std::sort(job.model.requests.begin(), job.model.requests.end(),
              [](const EvolvingStep& a, const EvolvingStep& b) { return a.at_done < b.at_done; });
  }
}

}  // namespace sched::sim
