// Making part of a workload malleable (docs/design.md §7): the ESP variant of the
// paper's Figure 3 and the elastic traces of Lina et al. Both draw with their
// own seeded generators, so the same seed gives the same jobs and the same
// submission order for every policy, and the malleable jobs of a smaller
// fraction stay malleable in a larger one.
#pragma once

#include <cstdint>

#include "sched/sim/workload.hpp"

namespace sched::sim {

// Application models for ESP jobs (docs/app-model.md): every job, malleable
// or not, gets an Amdahl serial fraction drawn log-uniformly from
// [0.002, 0.05] and eight AMR phases with factors drawn uniformly from
// [0.5, 1.5]; adaptation costs keep their defaults.
void model_esp_applications(Workload& workload, std::uint64_t seed);

// Makes round(fraction × jobs) jobs of an ESP workload malleable: they start
// at their requested size, with min/max the lowest and highest sizes their
// constraint allows within 1..nodes. Throws WorkloadError for a fraction
// outside 0..1.
void make_esp_malleable(Workload& workload, double fraction, std::uint64_t seed);

// Lina et al.'s elastic traces: round(fraction × jobs) jobs become elastic,
// half malleable and half evolving, with min = ceil(50%) and max = 800% of
// the requested size (capped at the cluster). Evolving jobs make 1–4 requests
// each, growing with probability 0.8, by 1 to their requested size, when
// 30–60% of their work is left. Throws WorkloadError for a fraction outside
// 0..1.
void make_swf_elastic(Workload& workload, int cluster_nodes, double fraction, std::uint64_t seed);

}  // namespace sched::sim
