#include "pmix_exchange.hpp"

#include <algorithm>
#include <stdexcept>

namespace sched::daemon {
namespace {

// The keys of `keys` that `store` has.
std::map<std::string, std::string> found(const std::map<std::string, std::string>& store,
                                         const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  for (const std::string& key : keys) {
    if (auto it = store.find(key); it != store.end()) out.insert(*it);
  }
  return out;
}

}  // namespace

std::vector<PmixExchange::Answer> PmixExchange::publish(
    JobId job, const std::map<std::string, std::string>& entries) {
  auto& store = published_[job];
  for (const auto& [key, value] : entries) store[key] = value;
  std::vector<Answer> answers;
  auto it = lookups_.find(job);
  if (it == lookups_.end()) return answers;
  std::erase_if(it->second, [&](const Lookup& lookup) {
    auto have = found(store, lookup.keys);
    if (have.size() < lookup.keys.size()) return false;
    answers.push_back(Answer{lookup.node, lookup.id, std::move(have)});
    return true;
  });
  return answers;
}

std::optional<PmixExchange::Answer> PmixExchange::lookup(JobId job, const std::string& node,
                                                         std::uint64_t id,
                                                         const std::vector<std::string>& keys,
                                                         bool wait) {
  auto have = found(published_[job], keys);
  if (!wait || have.size() == keys.size()) return Answer{node, id, std::move(have)};
  lookups_[job].push_back(Lookup{node, id, keys});
  return std::nullopt;
}

std::optional<std::map<std::string, std::string>> PmixExchange::connect(
    JobId job, const std::string& id, const std::set<std::int64_t>& steps,
    const std::set<std::string>& nodes, const std::string& node,
    const std::map<std::string, std::string>& entries) {
  if (!nodes.count(node)) {
    throw std::invalid_argument("node " + node + " runs no rank of connect " + id);
  }
  Connect& c = connects_[{job, id}];
  if (c.arrived.count(node)) {
    throw std::invalid_argument("node " + node + " is in connect " + id + " already");
  }
  c.steps.insert(steps.begin(), steps.end());
  c.arrived.insert(node);
  c.entries.insert(entries.begin(), entries.end());
  if (!std::includes(c.arrived.begin(), c.arrived.end(), nodes.begin(), nodes.end())) {
    return std::nullopt;
  }
  auto done = std::move(c.entries);
  connects_.erase({job, id});
  return done;
}

std::vector<std::pair<std::string, std::set<std::string>>> PmixExchange::drop_step(
    JobId job, std::int64_t step) {
  std::vector<std::pair<std::string, std::set<std::string>>> dropped;
  std::erase_if(connects_, [&](const auto& entry) {
    if (entry.first.first != job || !entry.second.steps.count(step)) return false;
    dropped.emplace_back(entry.first.second, entry.second.arrived);
    return true;
  });
  return dropped;
}

void PmixExchange::drop_job(JobId job) {
  published_.erase(job);
  lookups_.erase(job);
  std::erase_if(connects_, [&](const auto& entry) { return entry.first.first == job; });
}

std::size_t PmixExchange::waiting() const {
  std::size_t n = connects_.size();
  for (const auto& [job, list] : lookups_) n += list.size();
  return n;
}

}  // namespace sched::daemon
