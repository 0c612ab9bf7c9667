// Making part of a workload malleable (docs/design.md §7): the ESP variant of the
// paper's Figure 3 and the elastic traces of Lina et al. Both draw with their
// own seeded generators, so the same seed gives the same jobs and the same
// submission order for every policy, and the malleable jobs of a smaller
// fraction stay malleable in a larger one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/sim/app_model.hpp"
#include "sched/sim/workload.hpp"

namespace sched::sim {

// The application model every ESP job gets (docs/app-model.md): which
// speedup model, and which adaptation cost.
struct EspModelOptions {
  enum class Speedup { Amdahl, Downey, Linear };
  // Amdahl: serial fraction drawn log-uniformly from [0.002, 0.05] (the
  // default). Downey: average parallelism A drawn log-uniformly from
  // [8, 128] with σ = downey_sigma. Linear: S(n) = n.
  Speedup speedup = Speedup::Amdahl;
  double downey_sigma = 1;
  AdaptationCost adaptation = AdaptationCost::per_node();

  // "amdahl", "downey" or "linear"; nullopt for any other name.
  static std::optional<Speedup> parse_speedup(const std::string& name);
};

// Application models for ESP jobs (docs/app-model.md): every job, malleable
// or not, gets its speedup model's parameter drawn as above and eight AMR
// phases with factors drawn uniformly from [0.5, 1.5] (the same phases
// whatever the speedup model), and the options' adaptation cost.
void model_esp_applications(Workload& workload, std::uint64_t seed,
                            const EspModelOptions& model = {});

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

// The choices of Lina et al.'s setup that make_swf_elastic fixes
// (bench/lina, docs/experiments.md).
struct SwfElasticOptions {
  double fraction = 0;  // of the jobs made elastic, 0..1
  std::uint64_t seed = 1;
  // Of the elastic jobs, the share made malleable (the rest evolving): 0.5
  // is Lina's mix, 1 the all-malleable mode.
  double malleable_share = 0.5;
  // An evolving request changes the size by 1 to round(this × requested
  // size) nodes (at least 1); 1 is make_swf_elastic's range.
  double request_max_fraction = 1;
  // Adaptation costs of the elastic jobs. Ours: the model's defaults
  // (AdaptationCost::per_node). PerProcessor: Lina's, per processor with
  // cores_per_node processors a node: α and β drawn from U(0.005, 0.05) s
  // per job, a latency per adaptation of a synchronisation cost drawn from
  // U(0.015, 0.1) s plus a negotiation cost from U(0.005, 0.05) s, and no
  // process start or stop cost (Lina's b has no value in the paper).
  enum class Costs { Ours, PerProcessor };
  Costs costs = Costs::Ours;
  int cores_per_node = 1;
};

// As make_swf_elastic with the options' choices; with the defaults (and the
// same fraction and seed) the same workload. Throws WorkloadError for a
// fraction or share outside 0..1, a request fraction not above 0, or
// cores_per_node < 1.
void make_swf_elastic(Workload& workload, int cluster_nodes, const SwfElasticOptions& options);

}  // namespace sched::sim
