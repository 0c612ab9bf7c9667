// The ESP (Effective System Performance) benchmark as modified in the paper
// (docs/design.md §7, Table I): 230 jobs of 14 types, each a fixed fraction of the
// system running for a fixed time, submitted in a seeded random order.
//
// The order is drawn with std::mt19937_64 and our own shuffle, so a seed
// gives the same workload with every standard library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/job.hpp"
#include "sched/sim/elastic_workload.hpp"
#include "sched/sim/workload.hpp"

namespace sched::sim {

// The time limit each ESP job is submitted with. ESP gives run times only;
// the paper's runs used limits equal to them (exact), which gives a
// backfilling baseline perfect estimates. Users give round values instead
// (studies of real traces find a handful of modes: 15 minutes, 1 hour, ...),
// so a limit may be rounded up to a granularity, or be one value for every
// job (a site's default limit).
struct EspTimeLimit {
  enum class Rule { Exact, RoundUp, Fixed };
  Rule rule = Rule::Exact;
  double seconds = 0;  // RoundUp: the granularity; Fixed: the limit

  // The limit of a job that runs `runtime` seconds.
  double limit_for(double runtime) const;
  // "exact", "round:SECONDS" or "fixed:SECONDS"; nullopt when the text is
  // none of them (or the seconds are not a positive number).
  static std::optional<EspTimeLimit> parse(const std::string& text);
};

struct EspOptions {
  std::uint64_t seed = 1;
  int nodes = 32;              // the system the fractions refer to
  double interarrival_s = 30;  // one submission every interarrival_s seconds
  // Fraction of the jobs made malleable (0..1), drawn with the seed; see
  // make_esp_malleable in elastic_workload.hpp.
  double malleable_fraction = 0;
  EspTimeLimit time_limit;
  // The jobs' application models: speedup model and adaptation cost
  // (docs/app-model.md); the defaults are the paper experiment's.
  EspModelOptions model;
};

// One row of Table I.
struct EspType {
  char letter;      // 'A'..'M', 'Z'; also the job's spec.name
  double fraction;  // of the system's nodes
  int count;        // jobs of this type in the benchmark
  double runtime;   // static execution time, seconds
  NodeConstraint constraint;
};

// Table I in its order (A..M, then Z). Exposed so that variants (for example
// making a fraction of the jobs malleable) can work from the same rows.
const std::vector<EspType>& esp_types();

// The row for a type letter (the spec.name of an ESP job), if there is one.
std::optional<EspType> find_esp_type(char letter);

// A type's job size on a system of `nodes` nodes: max(1, round(fraction ×
// nodes)), halves rounded away from zero.
int esp_job_nodes(const EspType& type, int nodes);

// The benchmark: ids 1..230 in submission order, submit = (id − 1) ×
// interarrival_s, walltime = time_limit.limit_for(runtime), rigid but for malleable_fraction of
// them; every job has the ESP application model (model_esp_applications).
// The order and the models depend on the seed only, not on the fraction.
// Throws WorkloadError for nodes < 1, a negative or non-finite interarrival
// time, or a fraction outside 0..1.
Workload make_esp(const EspOptions& options);

}  // namespace sched::sim
