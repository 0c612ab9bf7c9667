#include "negotiation.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "sched/proto/envelope.hpp"
#include "sched/proto/transport.hpp"

namespace sched::daemon {
namespace {

// The routing id of schedd's own iScheduler (its DEALER).
constexpr std::string_view kOwnScheduler = "schedd-ischeduler";

negotiation::HypervisorLimits limits(const DaemonConfig::NegotiationConfig& c) {
  negotiation::HypervisorLimits l;
  l.max_attempts = c.max_attempts;
  l.max_timeout_s = c.timeout_s;
  l.min_status_interval_s = std::min(1.0, c.status_interval_s > 0 ? c.status_interval_s : 1.0);
  return l;
}

std::string bind_router(zmq::socket_t& router, const std::string& endpoint,
                        const std::string& partition) {
  std::string wanted = endpoint;
  if (wanted.size() > 2 && wanted.compare(wanted.size() - 2, 2, ":0") == 0) {
    wanted.replace(wanted.size() - 1, 1, "*");
  }
  try {
    router.bind(wanted);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("partition " + partition + ": the negotiation cannot listen on " +
                             endpoint + ": " + e.what());
  }
  return router.get(zmq::sockopt::last_endpoint);
}

const char* phase_name(negotiation::Phase phase) {
  switch (phase) {
    case negotiation::Phase::None:
      return "none";
    case negotiation::Phase::FirstOffer:
      return "first_offer";
    case negotiation::Phase::Starting:
      return "starting";
    case negotiation::Phase::OfferOpen:
      return "offer_open";
    case negotiation::Phase::Judging:
      return "judging";
    case negotiation::Phase::Ending:
      return "ending";
  }
  return "?";
}

int offer_cores(const std::optional<proto::NegoOfferSet>& offer) {
  int n = 0;
  if (!offer) return 0;
  for (const auto& r : offer->resources) {
    for (const auto& s : r.sockets) n += static_cast<int>(s.cores.size());
  }
  return n;
}

}  // namespace

Negotiation::Negotiation(zmq::context_t& context, Engine& engine, Setup setup, Sinks sinks)
    : context_(context),
      engine_(engine),
      setup_(std::move(setup)),
      sinks_(std::move(sinks)),
      router_(context, zmq::socket_type::router),
      hpolicy_(std::make_unique<invasive::HypervisorPolicy>(setup_.hypervisor_path)),
      model_(invasive::Topology{{}, 1, 1}),
      hypervisor_(model_, hpolicy_.get(), limits(setup_.config)),
      policy_(std::make_shared<NegotiationPolicy>("negotiation")) {
  const std::string& name = setup_.partition;
  if (!hpolicy_->host().loaded()) {
    throw std::runtime_error("partition " + name + ": hypervisor_policy " + setup_.hypervisor_path +
                             ": " + hpolicy_->host().last_error().value_or("does not load"));
  }
  router_.set(zmq::sockopt::linger, 0);
  endpoint_ = bind_router(router_, setup_.endpoint, name);
  if (setup_.config.scheduler == "internal") {
    spolicy_ = std::make_unique<invasive::SchedulerPolicy>(setup_.scheduler_path);
    if (!spolicy_->host().loaded()) {
      throw std::runtime_error("partition " + name + ": scheduler_policy " + setup_.scheduler_path +
                               ": " + spolicy_->host().last_error().value_or("does not load"));
    }
    const auto& c = setup_.config;
    scheduler_ = std::make_unique<invasive::SchedulerComponent>(
        *spolicy_, negotiation::Params{c.max_attempts, c.timeout_s, c.status_interval_s},
        "schedd/" + name);
    dealer_.emplace(context, zmq::socket_type::dealer);
    dealer_->set(zmq::sockopt::linger, 0);
    dealer_->set(zmq::sockopt::routing_id, std::string(kOwnScheduler));
    dealer_->connect(endpoint_);
  }
  policy_ =
      std::make_shared<NegotiationPolicy>("negotiation(" + hpolicy_->host().name() +
                                          (spolicy_ ? "/" + spolicy_->host().name() : "") + ")");
}

Negotiation::~Negotiation() = default;

void Negotiation::add_poll_items(std::vector<zmq::pollitem_t>& items) {
  items.push_back({router_.handle(), 0, ZMQ_POLLIN, 0});
  if (dealer_) items.push_back({dealer_->handle(), 0, ZMQ_POLLIN, 0});
}

void Negotiation::emit(const NegoEvent& event) {
  if (sinks_.event) sinks_.event(setup_.partition, event);
}

void Negotiation::turn(double now) {
  if (internal() && !scheduler_->side().ready() && !started_) {
    scheduler_->start(now);  // PROTOCOL_INIT
    started_ = true;
  }
  receive(now);
  take_outcomes();
  follow_engine(now);
  if (internal()) feed_scheduler(now);
  hypervisor_.tick(now);
  if (internal()) scheduler_->tick(now);
  take_job_events();
  send();
  // A flurry of messages settles within the turn when both sides are ours:
  // what was sent is often already there.
  receive(now);
  take_job_events();
  send();
}

void Negotiation::receive(double now) {
  while (auto m = proto::receive_routed(router_)) {
    std::string bytes(static_cast<const char*>(m->payload.data()), m->payload.size());
    if (internal() && m->peer != kOwnScheduler) {
      // The iHypervisor serves one iScheduler, here schedd's own: another
      // would end its session. Not answered; logged once.
      if (!stranger_logged_) {
        spdlog::warn(
            "partition {}: a peer other than schedd's iScheduler spoke at {}; ignored "
            "(scheduler = \"external\" lets another batch system's iScheduler in)",
            setup_.partition, endpoint_);
        stranger_logged_ = true;
      }
      continue;
    }
    if (!peer_.empty() && m->peer != peer_) {
      // Another iScheduler speaks: the one before is gone (§6); its open
      // transaction is abandoned and the newcomer initialises its own.
      hypervisor_.side().peer_gone();
      emit({"nego.peer_gone", 0, 0, 0, "", "another iScheduler connected", ""});
    }
    peer_ = m->peer;
    messages_.add(bytes);
    for (const NegoEvent& e : watch_.seen(bytes, false)) emit(e);
    hypervisor_.receive(bytes, now);
  }
  if (!dealer_) return;
  for (;;) {
    zmq::message_t m;
    if (!dealer_->recv(m, zmq::recv_flags::dontwait)) break;
    scheduler_->receive(std::string(static_cast<const char*>(m.data()), m.size()), now);
  }
}

void Negotiation::take_outcomes() {
  for (const NegotiationPolicy::Outcome& o : policy_->take_outcomes()) {
    if (o.kind != NegotiationPolicy::Kind::Start) {
      resuming_.erase(o.job);
      if (!o.refused) continue;
      // The model follows the engine again (follow_engine): a job the engine
      // did not suspend runs on in it, one it did not resume stays suspended.
      seen_version_ = ~std::uint64_t{0};
      const bool suspend = o.kind == NegotiationPolicy::Kind::Suspend;
      spdlog::error("partition {}: the engine refused to {} job {}: {}", setup_.partition,
                    suspend ? "suspend" : "resume", o.job, *o.refused);
      emit({"nego.refused", 0, 0, o.job, "engine", *o.refused,
            suspend ? "the suspension was refused" : "the resumption was refused"});
      continue;
    }
    starting_.erase(o.job);
    if (!o.refused) continue;
    // The engine refused the agreed start: the job is not started (twice or
    // at all); the model forgets it and, if it still waits, it is fed again.
    ++start_refusals_;
    model_.end(o.job);
    hypervisor_.side().set_running(model_.job_ids());
    seen_version_ = ~std::uint64_t{0};  // the engine's truth again (the job may run after all)
    if (internal()) scheduler_->withdraw(o.job);
    fed_.erase(o.job);
    spdlog::error("partition {}: the engine refused the agreed start of job {}: {}",
                  setup_.partition, o.job, *o.refused);
    emit({"nego.refused", 0, 0, o.job, "engine", *o.refused, "the agreed start was refused"});
  }
}

void Negotiation::follow_engine(double now) {
  // Jobs and nodes change only with events that move the state version.
  if (engine_.state_version() == seen_version_) return;
  seen_version_ = engine_.state_version();
  const auto index = engine_.partition_index(setup_.partition);
  if (!index) return;
  const Cluster& cluster = engine_.cluster();
  const CoreMap& cores = engine_.core_map();
  // The nodes jobs may start on: up, not draining, their cores known. One
  // shape for all (the smallest): a node with more cores offers that many.
  invasive::Topology topo{{}, 0, 0};
  std::vector<NodeIndex> usable;
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.nodes().size()); ++n) {
    const Node& node = cluster.node(n);
    if (node.partition != *index || !node.up || node.draining || !cores.tracked(n)) continue;
    usable.push_back(n);
    topo.nodes.push_back(node.name);
    const int sockets = std::max(1, cores.sockets(n));
    const int per_socket = std::max(1, cores.cores(n) / sockets);
    topo.sockets_per_node =
        topo.sockets_per_node == 0 ? sockets : std::min(topo.sockets_per_node, sockets);
    topo.cores_per_socket =
        topo.cores_per_socket == 0 ? per_socket : std::min(topo.cores_per_socket, per_socket);
  }
  topo.sockets_per_node = std::max(1, topo.sockets_per_node);
  topo.cores_per_socket = std::max(1, topo.cores_per_socket);
  // Who holds which of those cores, by the engine.
  std::map<JobId, std::vector<proto::NegoPlacement>> held;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    const NodeIndex n = usable[i];
    for (int c = 0; c < std::min(cores.cores(n), topo.cores_per_node()); ++c) {
      const JobId owner = cores.owner(n, c);
      if (owner == 0) continue;
      auto& placements = held[owner];
      if (placements.empty() || placements.back().node != topo.nodes[i]) {
        placements.push_back({owner, topo.nodes[i], {}});
      }
      placements.back().cores.push_back(c);
    }
  }
  // Suspended jobs hold no core in the engine but keep their core set, to
  // resume on: the model keeps those cores from offers meanwhile.
  std::map<JobId, std::vector<proto::NegoPlacement>> suspended;
  for (const Job* job : engine_.suspended_jobs()) {
    if (job->spec.partition != setup_.partition || job->run->cores.empty()) continue;
    auto& placements = suspended[job->id];
    for (const NodeCores& nc : job->run->cores) {
      const std::string& name = cluster.node(nc.node).name;
      if (std::find(topo.nodes.begin(), topo.nodes.end(), name) == topo.nodes.end()) continue;
      placements.push_back({job->id, name, {}});
      for (int c : nc.cores) {
        if (c < topo.cores_per_node()) placements.back().cores.push_back(c);
      }
    }
  }
  const auto add_suspended = [&](JobId job, const std::vector<proto::NegoPlacement>& placement) {
    if (model_.start(job, placement, now, true)) return;  // its cores are gone from the model
    model_.suspend(job);
  };
  const invasive::Topology& was = model_.topology();
  bool changed = false;
  if (topo.nodes != was.nodes || topo.sockets_per_node != was.sockets_per_node ||
      topo.cores_per_socket != was.cores_per_socket) {
    model_ = invasive::Partition(topo);
    for (const auto& [job, placement] : held) (void)model_.start(job, placement, now);
    for (const auto& [job, placement] : starting_) (void)model_.start(job, placement, now);
    for (const auto& [job, placement] : suspended) add_suspended(job, placement);
    changed = true;
  } else {
    for (JobId job : model_.job_ids()) {
      if (held.contains(job) || starting_.contains(job) || resuming_.contains(job)) continue;
      if (suspended.contains(job)) {
        if (!model_.jobs().at(job).suspended) {
          model_.suspend(job);  // the engine did not resume it (refused): it waits again
          changed = true;
        }
        continue;
      }
      hypervisor_.job_ended(job, now);  // ended, cancelled, failed, its node lost
      changed = true;
    }
    for (const auto& [job, placement] : suspended) {
      if (model_.has(job)) continue;
      add_suspended(job, placement);  // suspended before the model knew it
      changed = true;
    }
    for (const auto& [job, placement] : held) {
      if (model_.has(job) && !model_.jobs().at(job).suspended &&
          model_.jobs().at(job).placement == placement) {
        continue;
      }
      if (model_.has(job)) model_.end(job);  // its cores changed (a resize)
      if (auto error = model_.start(job, placement, now)) {
        spdlog::warn("partition {}: job {} is not in the negotiation's model: {}", setup_.partition,
                     job, *error);
      }
      changed = true;
    }
  }
  if (changed) {
    hypervisor_.side().set_running(model_.job_ids());
    hypervisor_.changed(now);  // an offer when the iScheduler waits
  }
}

void Negotiation::feed_scheduler(double now) {
  if (policy_->passes() == seen_passes_) return;  // the queue is as last seen
  seen_passes_ = policy_->passes();
  std::set<JobId> waiting;
  for (const NegotiationPolicy::Offered& job : policy_->offered()) {
    waiting.insert(job.job);
    if (starting_.contains(job.job) || model_.has(job.job)) continue;
    // Fed before, but the iScheduler let it go without its start (an
    // agreement the iHypervisor could not carry out): fed again.
    if (fed_.contains(job.job) && scheduler_->holds(job.job)) continue;
    fed_.insert(job.job);
    const invasive::PendingJob pending{job.job, job.cores, job.submit};
    if (job.urgent) {
      scheduler_->urgent(pending, now);  // URGENT_JOB
    } else {
      scheduler_->submit(pending, now);
    }
  }
  for (auto it = fed_.begin(); it != fed_.end();) {
    if (waiting.contains(*it)) {
      ++it;
      continue;
    }
    // Started (by its agreement), or cancelled or held: no longer the
    // iScheduler's to map.
    if (!starting_.contains(*it) && !model_.has(*it)) scheduler_->withdraw(*it);
    it = fed_.erase(it);
  }
}

void Negotiation::take_job_events() {
  bool starts = false;
  for (const invasive::JobEvent& e : hypervisor_.take_job_events()) {
    if (e.kind == invasive::JobEvent::Kind::Suspended) {
      policy_->add_suspend(e.job);  // for an urgent job, whose start follows
      starts = true;
      continue;
    }
    if (e.kind == invasive::JobEvent::Kind::Resumed) {
      resuming_.insert(e.job);  // its cores are free again in the model
      policy_->add_resume(e.job);
      starts = true;
      continue;
    }
    CoreSet set;
    std::optional<std::string> unknown;
    for (const auto& p : e.placement) {
      const auto node = engine_.cluster().find(p.node);
      if (!node) {
        unknown = p.node;
        break;
      }
      set.push_back({*node, p.cores});
      std::sort(set.back().cores.begin(), set.back().cores.end());
    }
    if (unknown) {
      model_.end(e.job);
      emit({"nego.refused", 0, 0, e.job, "engine", "no node " + *unknown, ""});
      ++start_refusals_;
      continue;
    }
    starting_[e.job] = e.placement;
    policy_->add_start({e.job, std::move(set)});
    starts = true;
  }
  if (starts) engine_.request_pass(PassReason::Manual);
}

void Negotiation::send() {
  for (const std::string& bytes : hypervisor_.take_outgoing()) {
    messages_.add(bytes);
    for (const NegoEvent& e : watch_.seen(bytes, true)) emit(e);
    if (auto status = proto::decode(bytes.data(), bytes.size());
        status.type == proto::type::kNegoStatus && !status.is_reply()) {
      last_status_ = status.body_as<proto::NegoStatus>();
    }
    if (!peer_.empty()) proto::send_routed(router_, peer_, bytes);
  }
  if (!internal()) return;
  for (const std::string& bytes : scheduler_->take_outgoing()) {
    dealer_->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
}

void Negotiation::reload_policies() {
  for (invasive::LuaHost* host : {&hpolicy_->host(), spolicy_ ? &spolicy_->host() : nullptr}) {
    if (!host) continue;
    const std::uint64_t failures = host->failures();
    if (host->reload_if_changed()) {
      if (sinks_.reload) sinks_.reload(setup_.partition, true, host->path());
    } else if (host->failures() > failures) {
      if (sinks_.reload) {
        sinks_.reload(setup_.partition, false,
                      host->path() + ": " + host->last_error().value_or("does not load") +
                          " (the last good version runs on)");
      }
    }
  }
}

proto::NegotiationInfo Negotiation::info() const {
  proto::NegotiationInfo info;
  const auto& side = hypervisor_.side();
  const auto& stats = hypervisor_.stats();
  info.partition = setup_.partition;
  info.endpoint = endpoint_;
  info.scheduler = setup_.config.scheduler;
  info.hypervisor_policy = hpolicy_->host().name();
  if (spolicy_) info.scheduler_policy = spolicy_->host().name();
  info.peer = side.ready() ? "ready" : peer_.empty() ? "none" : "initialising";
  info.phase = phase_name(side.phase());
  if (side.phase() != negotiation::Phase::None) {
    info.txn = side.txn();
    info.attempt = side.attempt();
    info.offer_cores = offer_cores(side.open_offer());
  }
  info.max_attempts = side.params().max_attempts;
  info.timeout_s = side.params().timeout_s;
  info.status_interval_s = side.params().status_interval_s;
  if (scheduler_) info.queued = static_cast<int>(scheduler_->pending().size());
  info.starting = static_cast<int>(starting_.size());
  info.cores_total = model_.cores_total();
  info.cores_busy = model_.cores_busy();
  info.transactions = stats.transactions;
  info.agreed = stats.agreed;
  info.agreed_empty = stats.agreed_empty;
  info.not_agreed = stats.not_agreed;
  info.rejected_mappings = stats.rejected_mappings;
  if (scheduler_) info.rejected_offers = scheduler_->stats().rejected_offers;
  info.start_refusals = start_refusals_;
  if (!stats.rounds.empty()) {
    double sum = 0;
    for (int r : stats.rounds) sum += r;
    info.mean_rounds = sum / static_cast<double>(stats.rounds.size());
    info.max_rounds = *std::max_element(stats.rounds.begin(), stats.rounds.end());
  }
  info.policy_errors = stats.policy_errors;
  info.last_policy_error = stats.last_policy_error;
  if (scheduler_) {
    info.policy_errors += scheduler_->stats().policy_errors;
    if (scheduler_->stats().last_policy_error) {
      info.last_policy_error = scheduler_->stats().last_policy_error;
    }
  }
  info.messages = messages_.by_type;
  info.last_status = last_status_;
  return info;
}

}  // namespace sched::daemon
