// The RAPL energy counters of a powercap tree (/sys/class/powercap):
// which zones make up the node's power, and reading them.
//
// A node's power is its packages plus their DRAM: top-level zones
// intel-rapl:N (AMD's counters appear under the same name), except "psys",
// which covers the whole platform and so overlaps the packages; and sub-zones
// intel-rapl:N:M named "dram", which the package counter leaves out. The
// other sub-zones (core, uncore) are inside their package and are skipped, as
// are intel-rapl-mmio zones, a second view of the same package counter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched::plugins::rapl {

struct Zone {
  std::string id;            // "intel-rapl:0", "intel-rapl:0:1"
  std::string name;          // the zone's name file: "package-0", "dram"; empty if unreadable
  std::string energy_path;   // …/energy_uj
  std::uint64_t max_uj = 0;  // max_energy_range_uj, where the counter wraps; 0 when unknown
};

// The zones to sum under `root`, sorted by id. Throws std::runtime_error when
// root cannot be listed or holds no such zone.
std::vector<Zone> find_zones(const std::string& root);

// A counter in microjoules, or nothing with the reason ("…/energy_uj:
// Permission denied") in `error`.
std::optional<std::uint64_t> read_energy_uj(const Zone& zone, std::string* error);

// Energy between two readings, allowing for one wrap-around at max_uj.
// Nothing when the counter went backwards and max_uj is unknown or exceeded.
std::optional<std::uint64_t> energy_delta_uj(std::uint64_t before, std::uint64_t after,
                                             std::uint64_t max_uj);

}  // namespace sched::plugins::rapl
