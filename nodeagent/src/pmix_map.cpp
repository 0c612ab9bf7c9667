#include "sched/agent/pmix_map.hpp"

#include <zmq.h>

#include <charconv>
#include <cstdint>
#include <stdexcept>

#include "sched/tasks/task_layout.hpp"

namespace sched::agent {
namespace {

std::string join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

}  // namespace

std::vector<int> PmixMap::ranks_on(int node) const {
  std::vector<int> ranks;
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank) {
    if (node_of_rank[rank] == node) ranks.push_back(static_cast<int>(rank));
  }
  return ranks;
}

int PmixMap::local_rank(int rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= node_of_rank.size()) return -1;
  int local = 0;
  for (int r = 0; r < rank; ++r)
    local +=
        node_of_rank[static_cast<std::size_t>(r)] == node_of_rank[static_cast<std::size_t>(rank)];
  return local;
}

std::string PmixMap::ppn() const {
  std::string out;
  for (std::size_t node = 0; node < nodes.size(); ++node) {
    if (node > 0) out += ';';
    out += join(ranks_on(static_cast<int>(node)));
  }
  return out;
}

std::string PmixMap::node_list() const {
  std::string out;
  for (const std::string& node : nodes) {
    if (!out.empty()) out += ',';
    out += node;
  }
  return out;
}

std::string PmixMap::peers(int node) const { return join(ranks_on(node)); }

std::optional<PmixMap> make_pmix_map(int tasks, const std::vector<std::string>& nodes,
                                     const std::string& distribution) {
  const auto how = tasks::parse_distribution(distribution);
  if (!how || nodes.empty() || tasks < static_cast<int>(nodes.size())) return std::nullopt;
  PmixMap map;
  map.nodes = nodes;
  for (const tasks::TaskPlace& place :
       tasks::place_tasks(tasks, static_cast<int>(nodes.size()), *how)) {
    map.node_of_rank.push_back(place.node);
  }
  return map;
}

// Z85 (ZeroMQ's RFC 32) takes whole 4-byte groups: the length in front says
// how much of the last group is padding.
std::string encode_fence_blob(std::string_view bytes) {
  std::string padded(bytes);
  padded.resize((bytes.size() + 3) / 4 * 4, '\0');
  std::string z85(padded.size() / 4 * 5 + 1, '\0');
  if (!padded.empty() &&
      !zmq_z85_encode(z85.data(), reinterpret_cast<const std::uint8_t*>(padded.data()),
                      padded.size())) {
    throw std::logic_error("Z85 refused a padded buffer");
  }
  z85.pop_back();  // its terminating NUL
  return std::to_string(bytes.size()) + ":" + z85;
}

std::optional<std::string> decode_fence_blob(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::size_t size = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + colon, size);
  if (error != std::errc() || end != text.data() + colon) return std::nullopt;
  const std::string z85(text.substr(colon + 1));
  if (z85.size() % 5 != 0 || z85.size() / 5 * 4 != (size + 3) / 4 * 4) return std::nullopt;
  std::string bytes(z85.size() / 5 * 4, '\0');
  if (!z85.empty() && !zmq_z85_decode(reinterpret_cast<std::uint8_t*>(bytes.data()), z85.c_str())) {
    return std::nullopt;
  }
  bytes.resize(size);
  return bytes;
}

}  // namespace sched::agent
