#include "step_table.hpp"

#include <algorithm>

namespace sched::daemon {

StepRecord* StepTable::find(JobId job, std::int64_t step) {
  auto it = steps_.find({job, step});
  return it == steps_.end() ? nullptr : &it->second;
}

std::vector<std::int64_t> StepTable::children(JobId job, std::int64_t step) const {
  std::vector<std::int64_t> out;
  for (auto it = steps_.lower_bound({job, 0}); it != steps_.end() && it->first.first == job; ++it) {
    if (it->second.parent == step) out.push_back(it->first.second);
  }
  return out;
}

std::pair<std::int64_t, StepRecord*> StepTable::newest(JobId job) {
  // Keys sort by (job, step): the last key below (job + 1, 0) is the newest.
  auto it = steps_.lower_bound({job + 1, 0});
  while (it != steps_.begin()) {
    --it;
    if (it->first.first != job) break;
    if (it->second.adapt_of == 0) return {it->first.second, &it->second};
  }
  return {0, nullptr};
}

std::vector<std::int64_t> StepTable::drop_adapted(JobId job, std::int64_t step) {
  std::vector<std::int64_t> dropped;
  std::erase_if(steps_, [&](const auto& entry) {
    if (entry.first.first != job || entry.second.adapt_of != step) return false;
    dropped.push_back(entry.first.second);
    return true;
  });
  return dropped;
}

std::vector<std::string> StepRecord::fence_nodes() const {
  if (!mpi_nodes.empty()) return mpi_nodes;
  std::vector<std::string> nodes;
  for (const auto& [node, ranks] : layout) {
    if (!ranks.empty()) nodes.push_back(node);
  }
  return nodes;
}

std::optional<std::string> StepTable::task_exited(JobId job, std::int64_t step) {
  auto it = steps_.find({job, step});
  if (it == steps_.end() || --it->second.remaining > 0) return std::nullopt;
  std::string client = std::move(it->second.client);
  steps_.erase(it);
  return client;
}

bool StepTable::adopt(const std::string& node, const proto::StepLaunch& launch) {
  auto [it, created] = steps_.try_emplace({launch.job, launch.step});
  StepRecord& record = it->second;
  if (created) record.launch = launch;
  for (const auto& [known, ranks] : record.layout) {
    if (known == node) return false;
  }
  record.layout.emplace_back(node, launch.ranks);
  // The layout lists nodes in rank order, as the engine laid the step out.
  std::sort(record.layout.begin(), record.layout.end(), [](const auto& a, const auto& b) {
    return a.second.empty() || (!b.second.empty() && a.second.front() < b.second.front());
  });
  record.remaining += static_cast<int>(launch.ranks.size());
  record.tasks = launch.tasks;
  last_[launch.job] = std::max(last_[launch.job], launch.step);
  return true;
}

}  // namespace sched::daemon
