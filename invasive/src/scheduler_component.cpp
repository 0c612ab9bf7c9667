#include <algorithm>
#include <map>
#include <set>

#include "sched/invasive/components.hpp"

namespace sched::invasive {

using negotiation::Note;
using negotiation::Phase;

SchedulerComponent::SchedulerComponent(SchedulerPolicy& policy, negotiation::Params wanted,
                                       std::string name)
    : policy_(policy), wanted_(wanted), name_(std::move(name)) {}

void SchedulerComponent::start(double now) { side_.init(wanted_, name_, now); }

void SchedulerComponent::submit(const PendingJob& job, double now) {
  pending_.push_back(job);
  ask_if_waiting(now);
}

void SchedulerComponent::urgent(const PendingJob& job, double now) {
  urgent_asked_[job.job] = job;
  side_.urgent(proto::NegoUrgent{job.job, job.cores, 1}, now);
}

void SchedulerComponent::receive(const std::string& bytes, double now) {
  side_.on_message(bytes, now);
  process(now);
}

void SchedulerComponent::tick(double now) {
  side_.tick(now);
  process(now);
}

std::vector<std::string> SchedulerComponent::take_outgoing() { return side_.take_outgoing(); }

bool SchedulerComponent::holds(std::int64_t job) const {
  return urgent_asked_.contains(job) || handed_.contains(job) ||
         std::any_of(pending_.begin(), pending_.end(),
                     [&](const PendingJob& j) { return j.job == job; });
}

void SchedulerComponent::withdraw(std::int64_t job) {
  std::erase_if(pending_, [&](const PendingJob& j) { return j.job == job; });
  urgent_asked_.erase(job);
  handed_.erase(job);
}

void SchedulerComponent::ask_if_waiting(double now) {
  if (side_.ready() && !side_.interested() && side_.phase() == Phase::None && !pending_.empty()) {
    side_.request_offer(static_cast<std::int64_t>(pending_.size()), now);
  }
}

std::optional<std::string> SchedulerComponent::check(
    const std::vector<proto::NegoPlacement>& mapping) const {
  std::map<std::int64_t, int> cores;
  for (const auto& p : mapping) cores[p.job] += static_cast<int>(p.cores.size());
  for (const auto& [job, n] : cores) {
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const PendingJob& j) { return j.job == job; });
    if (it == pending_.end()) return "job " + std::to_string(job) + " is not pending";
    if (it->cores != n) {
      return "job " + std::to_string(job) + " asked for " + std::to_string(it->cores) +
             " cores, not " + std::to_string(n);
    }
  }
  return std::nullopt;
}

void SchedulerComponent::answer(const proto::NegoOfferSet& offer, int attempt, bool last,
                                double now) {
  std::string error;
  auto result = policy_.map(offer, attempt, last, pending_, report_, now, &error);
  if (result && result->accepted) {
    auto problem = check(result->mapping);
    if (!problem) problem = negotiation::check_mapping(offer, result->mapping);
    if (problem) {
      error = policy_.host().name() + ".map: " + *problem;
      result.reset();
    }
  }
  if (!result) {
    ++stats_.policy_errors;
    stats_.last_policy_error = error;
    result = MapResult{false, {}, "the iScheduler's map failed"};
  }
  if (!result->accepted && last) {  // §5.4: the last offer must be accepted
    result = MapResult{true, {}, {}};
  }
  if (!result->accepted) ++stats_.rejected_offers;
  side_.answer(result->accepted, std::move(result->mapping),
               result->accepted ? std::string_view{} : std::string_view(result->reason), now);
  offer_.reset();
}

void SchedulerComponent::process(double now) {
  for (;;) {
    auto notes = side_.take_notes();
    if (notes.empty()) break;
    for (const Note& n : notes) {
      switch (n.kind) {
        case Note::Kind::Initialised: {
          std::set<std::int64_t> running(n.running.begin(), n.running.end());
          for (auto it = handed_.begin(); it != handed_.end();) {
            if (running.contains(it->first)) {
              it = handed_.erase(it);
            } else {
              pending_.push_back(it->second);  // §6: not started, it waits again
              it = handed_.erase(it);
            }
          }
          ask_if_waiting(now);
          break;
        }
        case Note::Kind::Offer:
          ++stats_.offers;
          if (side_.phase() == Phase::FirstOffer) {
            if (pending_.empty()) {
              ++stats_.declined;
              side_.decline("no job waits", now);
            } else {
              offer_ = n.offer;
              offer_attempt_ = n.attempt;
              offer_last_ = n.last_attempt;
              side_.take_offer(now);
            }
          } else {
            answer(*n.offer, n.attempt, n.last_attempt, now);
          }
          break;
        case Note::Kind::Started:
          if (offer_) answer(*offer_, offer_attempt_, offer_last_, now);
          break;
        case Note::Kind::Agreed: {
          handed_.clear();  // the earlier hand-over stands: H answered it
          for (const auto& p : n.mapping) {
            auto it = std::find_if(pending_.begin(), pending_.end(),
                                   [&](const PendingJob& j) { return j.job == p.job; });
            if (it != pending_.end()) {
              handed_[it->job] = *it;
              pending_.erase(it);
            }
          }
          break;
        }
        case Note::Kind::Revoked:
          for (const auto& p : n.mapping) {
            auto it = handed_.find(p.job);
            if (it == handed_.end()) continue;
            pending_.push_back(it->second);
            handed_.erase(it);
          }
          std::sort(pending_.begin(), pending_.end(),
                    [](const PendingJob& a, const PendingJob& b) { return a.submit < b.submit; });
          ask_if_waiting(now);
          break;
        case Note::Kind::Closed:
          offer_.reset();
          ask_if_waiting(now);
          break;
        case Note::Kind::Status:
          report_ = n.status;
          ++stats_.reports;
          break;
        case Note::Kind::UrgentAnswer: {
          auto it = urgent_asked_.find(n.urgent_answer->job);
          if (it == urgent_asked_.end()) break;
          if (!n.urgent_answer->started) {
            urgent_refused_.push_back(it->first);
            pending_.push_back(it->second);
            std::sort(pending_.begin(), pending_.end(),
                      [](const PendingJob& a, const PendingJob& b) { return a.submit < b.submit; });
            ask_if_waiting(now);
          }
          urgent_asked_.erase(it);
          break;
        }
        default:
          break;
      }
    }
  }
}

}  // namespace sched::invasive
