#include "sched/sim/esp_workload.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "sched/sim/elastic_workload.hpp"

namespace sched::sim {
namespace {

// A uniform draw from [0, bound) without modulo bias: values from the short
// top part of the 64-bit range that would favour small results are redrawn.
std::uint64_t draw_below(std::mt19937_64& engine, std::uint64_t bound) {
  // 2^64 mod bound, computed in unsigned arithmetic without overflow.
  const std::uint64_t threshold = (std::uint64_t{0} - bound) % bound;
  while (true) {
    const std::uint64_t value = engine();
    if (value >= threshold) return value % bound;
  }
}

// Fisher–Yates: each permutation equally likely, fixed for a given engine.
template <typename T>
void shuffle(std::vector<T>& items, std::mt19937_64& engine) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(draw_below(engine, i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace

const std::vector<EspType>& esp_types() {
  using C = NodeConstraint;
  static const std::vector<EspType> types = {
      {'A', 0.03125, 75, 267, C::None},  {'B', 0.06250, 9, 322, C::Pof2},
      {'C', 0.50000, 3, 534, C::None},   {'D', 0.25000, 3, 616, C::Even},
      {'E', 0.50000, 3, 315, C::None},   {'F', 0.06250, 9, 1846, C::Pof2},
      {'G', 0.12500, 6, 1334, C::Even},  {'H', 0.15625, 6, 1067, C::Odd},
      {'I', 0.03125, 24, 1432, C::None}, {'J', 0.06250, 24, 725, C::Pof2},
      {'K', 0.09375, 15, 487, C::None},  {'L', 0.12500, 36, 366, C::Even},
      {'M', 0.25000, 15, 187, C::None},  {'Z', 1.00000, 2, 100, C::None},
  };
  return types;
}

std::optional<EspType> find_esp_type(char letter) {
  for (const auto& type : esp_types()) {
    if (type.letter == letter) return type;
  }
  return std::nullopt;
}

int esp_job_nodes(const EspType& type, int nodes) {
  return std::max(1, static_cast<int>(std::lround(type.fraction * nodes)));
}

double EspTimeLimit::limit_for(double runtime) const {
  switch (rule) {
    case Rule::RoundUp:
      return std::ceil(runtime / seconds) * seconds;
    case Rule::Fixed:
      return seconds;
    case Rule::Exact:
      break;
  }
  return runtime;
}

std::optional<EspTimeLimit> EspTimeLimit::parse(const std::string& text) {
  if (text == "exact") return EspTimeLimit{};
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string rule = text.substr(0, colon);
  const std::string number = text.substr(colon + 1);
  double seconds = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), seconds);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(seconds) ||
      seconds <= 0) {
    return std::nullopt;
  }
  if (rule == "round") return EspTimeLimit{Rule::RoundUp, seconds};
  if (rule == "fixed") return EspTimeLimit{Rule::Fixed, seconds};
  return std::nullopt;
}

Workload make_esp(const EspOptions& options) {
  if (options.nodes < 1) throw WorkloadError("esp: nodes must be at least 1");
  if (!std::isfinite(options.interarrival_s) || options.interarrival_s < 0) {
    throw WorkloadError("esp: interarrival_s must be a non-negative number of seconds");
  }

  // Every job as its type's index, in table order, then shuffled.
  std::vector<std::size_t> order;
  const auto& types = esp_types();
  for (std::size_t t = 0; t < types.size(); ++t) {
    order.insert(order.end(), static_cast<std::size_t>(types[t].count), t);
  }
  std::mt19937_64 engine(options.seed);
  shuffle(order, engine);

  Workload workload;
  workload.source = "esp";
  workload.nodes = options.nodes;
  workload.cores_per_node = 1;
  workload.jobs.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const EspType& type = types[order[i]];
    WorkloadJob job;
    job.id = static_cast<JobId>(i + 1);
    job.submit = static_cast<double>(i) * options.interarrival_s;
    job.runtime = type.runtime;
    job.spec.name = std::string(1, type.letter);
    job.spec.kind = JobKind::Rigid;
    job.spec.nodes = esp_job_nodes(type, options.nodes);
    job.spec.constraint = type.constraint;
    job.spec.walltime = options.time_limit.limit_for(type.runtime);
    if (const auto error = normalize_spec(job.spec)) {
      throw WorkloadError("esp: type " + job.spec.name + ": " + *error);
    }
    workload.jobs.push_back(std::move(job));
  }
  model_esp_applications(workload, options.seed, options.model);
  make_esp_malleable(workload, options.malleable_fraction, options.seed);
  return workload;
}

}  // namespace sched::sim
