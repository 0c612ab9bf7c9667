#include <algorithm>
#include <map>

#include "sched/invasive/components.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/error.hpp"

namespace sched::invasive {

using negotiation::Note;
using negotiation::Phase;

void MessageCounts::add(const std::string& bytes) {
  ++total;
  try {
    ++by_type[proto::decode(bytes.data(), bytes.size()).type];
  } catch (const proto::ProtoError&) {
    ++by_type["(unreadable)"];
  }
}

HypervisorComponent::HypervisorComponent(Partition& partition, HypervisorPolicy* policy,
                                         negotiation::HypervisorLimits limits)
    : partition_(partition), policy_(policy), side_(limits) {}

void HypervisorComponent::receive(const std::string& bytes, double now) {
  if (first_time_ < 0) first_time_ = now;
  side_.on_message(bytes, now);
  process(now);
}

void HypervisorComponent::changed(double now) {
  try_offer("changed", now);
  process(now);
}

void HypervisorComponent::job_ended(std::int64_t job, double now) {
  partition_.end(job);
  ++finished_;
  for (std::int64_t id : partition_.resume_ready()) {
    job_events_.push_back({JobEvent::Kind::Resumed, id, partition_.jobs().at(id).placement});
  }
  side_.set_running(partition_.job_ids());
  (void)now;
}

void HypervisorComponent::tick(double now) {
  if (first_time_ < 0) first_time_ = now;
  side_.tick(now);
  if (side_.status_due(now)) {
    proto::NegoStatus status;
    status.time = now;
    status.cores_total = partition_.cores_total();
    status.cores_busy = partition_.cores_busy();
    status.utilisation =
        status.cores_total ? static_cast<double>(status.cores_busy) / status.cores_total : 0;
    const double hours = (now - first_time_) / 3600;
    status.throughput_per_hour = hours > 0 ? static_cast<double>(finished_) / hours : 0;
    status.mean_wait_s = 0;  // the iHypervisor does not see submit times
    for (const auto& [id, job] : partition_.jobs()) {
      status.jobs.push_back({id, job.suspended ? "suspended" : "running", job.cores()});
    }
    side_.report(status, now);
  }
  process(now);
}

std::vector<std::string> HypervisorComponent::take_outgoing() {
  for (auto& m : side_.take_outgoing()) outgoing_.push_back(std::move(m));
  return std::exchange(outgoing_, {});
}

std::vector<JobEvent> HypervisorComponent::take_job_events() {
  return std::exchange(job_events_, {});
}

void HypervisorComponent::policy_error(const std::string& error) {
  ++stats_.policy_errors;
  stats_.last_policy_error = error;
}

HypervisorView HypervisorComponent::view(std::string_view reason, int attempt, double now) const {
  HypervisorView v;
  v.time = now;
  v.txn = side_.phase() == Phase::None ? 0 : side_.txn();
  v.attempt = attempt;
  v.reason = std::string(reason);
  v.partition = &partition_;
  v.rejected = rejected_;
  return v;
}

std::optional<proto::NegoOfferSet> HypervisorComponent::build_offer(std::string_view reason,
                                                                    double now) {
  proto::NegoOfferSet offer;
  bool fallback = policy_ == nullptr;
  if (policy_) {
    std::string error;
    if (auto made = policy_->make_offer(
            view(reason, side_.phase() == Phase::None ? 1 : side_.attempt() + 1, now), &error)) {
      offer = std::move(*made);
      // An offer holds only free cores: what else the policy names could
      // not be started (a virtual offer shows a part of them, §4).
      int dropped = 0;
      for (auto& r : offer.resources) {
        for (auto& s : r.sockets) {
          dropped += static_cast<int>(
              std::erase_if(s.cores, [&](int c) { return !partition_.is_free(r.node, c); }));
        }
        std::erase_if(r.sockets, [](const proto::NegoSocket& s) { return s.cores.empty(); });
      }
      std::erase_if(offer.resources,
                    [](const proto::NegoResource& r) { return r.sockets.empty(); });
      if (dropped > 0) {
        policy_error(policy_->host().name() + ".make_offer offered " + std::to_string(dropped) +
                     " core(s) that are not free: left out");
      }
    } else {
      policy_error(error);
      fallback = true;
    }
  }
  if (fallback) {
    offer.resources = partition_.free_resources();
    offer.is_virtual = false;
  }
  offer.offer = ++next_offer_id_;
  return offer;
}

void HypervisorComponent::try_offer(std::string_view reason, double now) {
  if (!side_.ready() || !side_.interested() || side_.phase() != Phase::None) return;
  if (partition_.free_resources().empty()) return;  // nothing free: no offer (§5.2)
  rejected_.clear();
  auto offer = build_offer(reason, now);
  if (!offer || offer->resources.empty()) return;
  side_.offer(std::move(*offer), reason, now);
  ++stats_.transactions;
}

void HypervisorComponent::judge(const Note& answer, double now) {
  if (answer.last_attempt) {  // §5.4: the last answer is accepted
    if (policy_ && answer.accepted && !answer.mapping.empty()) {
      // Asked all the same, for the statistics only: agreed against its metric.
      std::string error;
      auto judged = policy_->judge(*side_.open_offer(), answer.mapping,
                                   view("", answer.attempt, now), &error);
      if (!judged) {
        policy_error(error);
      } else if (!judged->accepted) {
        ++stats_.forced_at_limit;
      }
    }
    attempt_agreed_ = answer.attempt;
    side_.accept_mapping(now);
    return;
  }
  if (!answer.accepted) {
    auto offer = build_offer("offer_rejected", now);
    side_.reoffer(std::move(*offer), "offer_rejected", now);
    return;
  }
  Judgement verdict{true, {}};
  if (policy_) {
    std::string error;
    auto judged =
        policy_->judge(*side_.open_offer(), answer.mapping, view("", answer.attempt, now), &error);
    if (judged) {
      verdict = *judged;
    } else {
      policy_error(error);
      verdict = {false, "the iHypervisor's judge failed"};
    }
  }
  if (verdict.accepted) {
    attempt_agreed_ = answer.attempt;
    side_.accept_mapping(now);
    return;
  }
  ++stats_.rejected_mappings;
  rejected_.push_back(answer.mapping);
  const std::string reason =
      "mapping_rejected: " + (verdict.reason.empty() ? std::string("by policy") : verdict.reason);
  auto offer = build_offer(reason, now);
  side_.reoffer(std::move(*offer), reason, now);
}

void HypervisorComponent::start_agreed(const std::vector<proto::NegoPlacement>& mapping,
                                       double now) {
  std::map<std::int64_t, std::vector<proto::NegoPlacement>> by_job;
  for (const auto& p : mapping) by_job[p.job].push_back(p);
  for (auto& [job, placement] : by_job) {
    if (auto error = partition_.start(job, placement, now)) {
      policy_error("agreed job " + std::to_string(job) + " not started: " + *error);
      continue;
    }
    job_events_.push_back({JobEvent::Kind::Started, job, std::move(placement)});
  }
  side_.set_running(partition_.job_ids());
}

void HypervisorComponent::urgent(const proto::NegoUrgent& request, double now) {
  if (side_.phase() == Phase::Ending) {  // an end is out: start once it is answered
    urgent_waiting_.push_back(request);
    return;
  }
  proto::NegoUrgentResponse answer;
  answer.job = request.job;
  const Topology& topo = partition_.topology();
  if (topo.nodes.empty()) {
    answer.reason = "no node in the partition";
    side_.answer_urgent(answer, now);
    return;
  }
  if (request.cores > topo.cores_per_node()) {
    answer.reason = "more cores than a node holds";
    side_.answer_urgent(answer, now);
    return;
  }
  // The node with the most free cores; running jobs there are suspended,
  // the latest started first, until the urgent job fits.
  auto free_on = [&](const std::string& node) {
    int n = 0;
    for (int c = 0; c < topo.cores_per_node(); ++c) n += partition_.is_free(node, c);
    return n;
  };
  std::string node = topo.nodes.front();
  for (const auto& n : topo.nodes) {
    if (free_on(n) > free_on(node)) node = n;
  }
  if (side_.phase() != Phase::None) {
    side_.abandon("urgent job " + std::to_string(request.job), now);
    rejected_.clear();
  }
  std::vector<const PartitionJob*> on_node;
  for (const auto& [id, job] : partition_.jobs()) {
    if (job.suspended) continue;
    for (const auto& p : job.placement) {
      if (p.node == node) on_node.push_back(&job);
    }
  }
  std::sort(on_node.begin(), on_node.end(),
            [](const PartitionJob* a, const PartitionJob* b) { return a->start > b->start; });
  // Cores usable: those no running job holds (victims' included).
  auto usable = [&](int c) { return partition_.is_idle(node, c); };
  std::vector<std::int64_t> victims;
  int have = 0;
  for (int c = 0; c < topo.cores_per_node(); ++c) have += partition_.is_idle(node, c);
  for (const PartitionJob* j : on_node) {
    if (have >= request.cores || !suspend_allowed_) break;
    victims.push_back(j->job);
    have += j->cores();
  }
  for (std::int64_t v : victims) {
    const int cores = partition_.jobs().at(v).cores();
    partition_.suspend(v);
    answer.victims.push_back({v, "suspended", cores});
    job_events_.push_back({JobEvent::Kind::Suspended, v, partition_.jobs().at(v).placement});
  }
  // Packed: the sockets with the most usable cores first.
  std::vector<std::pair<int, int>> sockets;  // (usable, socket)
  for (int s = 0; s < topo.sockets_per_node; ++s) {
    int n = 0;
    for (int i = 0; i < topo.cores_per_socket; ++i) n += usable(s * topo.cores_per_socket + i);
    sockets.push_back({n, s});
  }
  std::sort(sockets.begin(), sockets.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  proto::NegoPlacement placement{request.job, node, {}};
  for (auto [n, s] : sockets) {
    for (int i = 0;
         i < topo.cores_per_socket && static_cast<int>(placement.cores.size()) < request.cores;
         ++i) {
      const int c = s * topo.cores_per_socket + i;
      if (usable(c)) placement.cores.push_back(c);
    }
  }
  std::sort(placement.cores.begin(), placement.cores.end());
  if (static_cast<int>(placement.cores.size()) < request.cores) {
    answer.reason = suspend_allowed_ ? "not enough cores on any node"
                                     : "not enough free cores on any node (no suspending here)";
  } else if (auto error = partition_.start(request.job, {placement}, now, true)) {
    answer.reason = *error;
  } else {
    answer.started = true;
    answer.placement.push_back(placement);
    job_events_.push_back({JobEvent::Kind::Started, request.job, {placement}});
  }
  side_.set_running(partition_.job_ids());
  side_.answer_urgent(answer, now);
}

void HypervisorComponent::process(double now) {
  for (;;) {
    auto notes = side_.take_notes();
    if (notes.empty()) break;
    for (const Note& n : notes) {
      switch (n.kind) {
        case Note::Kind::OfferRequested:
          try_offer("requested", now);
          break;
        case Note::Kind::Answer:
          judge(n, now);
          break;
        case Note::Kind::Agreed:
          if (n.mapping.empty()) {
            ++stats_.agreed_empty;
          } else {
            ++stats_.agreed;
            stats_.rounds.push_back(attempt_agreed_);
          }
          rejected_.clear();
          start_agreed(n.mapping, now);
          for (auto& u : std::exchange(urgent_waiting_, {})) urgent(u, now);
          if (!n.mapping.empty()) try_offer("changed", now);
          break;
        case Note::Kind::Closed:
          ++stats_.not_agreed;
          rejected_.clear();
          for (auto& u : std::exchange(urgent_waiting_, {})) urgent(u, now);
          if (n.outcome == proto::nego_outcome::kAbandoned) try_offer("retry", now);
          break;
        case Note::Kind::Urgent:
          urgent(*n.urgent, now);
          break;
        case Note::Kind::Refused:
        case Note::Kind::PeerRefused:
          ++stats_.refusals;
          stats_.last_policy_error = n.message_type + ": " + n.code + ": " + n.reason;
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace sched::invasive
