// The power experiment of Chadha et al. (docs/design.md §7, Table II, Figure 4):
// 14 nodes, 20 jobs alternating a Pi job (170 W per node) and a heat solver
// (250 W per node), 1–4 requested nodes, min 1 and max 14, one submission
// every 2 s, idle nodes at 71 W, and a power corridor that changes twice.
// Every job is malleable; a policy that never resizes (easy_backfill) is the
// paper's scenario 1.
//
// The paper gives neither runtimes nor the times of the corridor changes;
// the values below are ours: runtimes chosen so that static backfilling needs
// about the paper's 13.75 minutes (with seed 1: 14.0), corridor changes at 5
// and 10 minutes.
#pragma once

#include <cstdint>

#include "sched/sim/workload.hpp"

namespace sched::sim {

struct PowerExperimentOptions {
  std::uint64_t seed = 1;     // requested sizes (1–4) are drawn from it
  double pi_runtime_s = 200;  // at the requested size
  double heat_runtime_s = 240;
  double first_change_s = 300;   // corridor [1700, 2500] → [1000, 1700]
  double second_change_s = 600;  // → [2500, 3500]
};

Workload make_power_experiment(const PowerExperimentOptions& options);

}  // namespace sched::sim
