#include "sched/release_index.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace sched {

namespace {

double end_of(const Job& job) {
  const double end = job.est_end();
  return end >= 0 ? end : std::numeric_limits<double>::infinity();
}

}  // namespace

std::vector<ReleaseIndex::Entry>::iterator ReleaseIndex::find(double end, JobId id) {
  return std::lower_bound(entries_.begin(), entries_.end(), std::pair{end, id},
                          [](const Entry& e, const std::pair<double, JobId>& key) {
                            return e.end < key.first || (e.end == key.first && e.job < key.second);
                          });
}

void ReleaseIndex::relist(JobId id, Member& member, const Job& job) {
  const double end = end_of(job);
  const int size = job.size();
  if (member.size > 0 && member.end == end) {
    if (size > 0) {
      find(end, id)->size = size;
    } else {
      entries_.erase(find(end, id));
    }
  } else {
    if (member.size > 0) entries_.erase(find(member.end, id));
    if (size > 0) entries_.insert(find(end, id), Entry{end, id, size});
  }
  member = Member{end, std::max(size, 0)};
}

void ReleaseIndex::join(const Job& job) {
  auto [it, added] = pooled_emplace(members_, spare_, job.id, Member{});
  relist(job.id, it->second, job);
}

void ReleaseIndex::update(const Job& job) {
  auto it = members_.find(job.id);
  if (it == members_.end()) return;
  Member& member = it->second;
  if (member.size == std::max(job.size(), 0) && member.end == end_of(job)) return;
  relist(job.id, member, job);
}

void ReleaseIndex::leave(JobId id) {
  auto it = members_.find(id);
  if (it == members_.end()) return;
  if (it->second.size > 0) entries_.erase(find(it->second.end, id));
  spare_.keep(members_.extract(it));
}

}  // namespace sched
