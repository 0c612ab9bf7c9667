// `sched prio`'s table, like sprio's: one line per pending job with its
// priority and weighted factors (issue 18 item 5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/job.hpp"

namespace sched::cli {

struct PrioRow {
  JobId id = 0;
  std::string user;
  std::int64_t priority = 0;
  std::int64_t age = 0;  // weighted factors, as sprio shows them
  std::int64_t fairshare = 0;
  std::int64_t jobsize = 0;
  std::int64_t qos = 0;
  std::int64_t nice = 0;
};

struct PrioWeights {
  std::int64_t age = 0;
  std::int64_t fairshare = 0;
  std::int64_t jobsize = 0;
  std::int64_t qos = 0;
};

// JOBID USER PRIORITY AGE FAIRSHARE JOBSIZE QOS NICE, numbers right-aligned;
// with `weights`, a first line "Weights" with them under the factors (sprio -w).
std::string render_prio(const std::vector<PrioRow>& rows, const PrioWeights* weights = nullptr);

// sprio -w alone: the header and the Weights line.
std::string render_prio_weights(const PrioWeights& weights);

}  // namespace sched::cli
