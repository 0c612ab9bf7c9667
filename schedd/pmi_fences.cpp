#include "pmi_fences.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace sched::daemon {

std::optional<PmiFences::Complete> PmiFences::arrive(
    JobId job, std::int64_t step, std::int64_t fence, const std::vector<std::string>& nodes,
    const std::string& node, const std::map<std::string, std::string>& entries) {
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
    throw std::invalid_argument("node " + node + " runs no rank of step " + std::to_string(step) +
                                " of job " + std::to_string(job));
  }
  if (fence < 1) throw std::invalid_argument("fence numbers start at 1");
  const auto key = std::make_tuple(job, step, fence);
  Gathering& g = fences_[key];
  if (g.arrived.count(node)) {
    throw std::invalid_argument("node " + node + " is in fence " + std::to_string(fence) +
                                " already");
  }
  for (const auto& [k, v] : entries) {
    if (auto it = g.entries.find(k); it != g.entries.end() && it->second != v) {
      throw std::invalid_argument("key " + k + " was put with two values");
    }
  }
  g.arrived.insert(node);
  g.entries.insert(entries.begin(), entries.end());
  if (g.arrived.size() < std::set<std::string>(nodes.begin(), nodes.end()).size()) {
    return std::nullopt;
  }
  Complete done{std::move(g.entries)};
  fences_.erase(key);
  return done;
}

void PmiFences::drop(JobId job, std::int64_t step) {
  std::erase_if(fences_, [&](const auto& entry) {
    return std::get<0>(entry.first) == job && std::get<1>(entry.first) == step;
  });
}

}  // namespace sched::daemon
