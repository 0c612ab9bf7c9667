// A negotiated partition in schedd (issue 20 items 3, 5; docs/admin.md
// "Negotiated partitions", docs/negotiation.md §7): a cores partition whose
// jobs start through the negotiation protocol, both sides in schedd and
// still behind a socket boundary.
//
//   the iHypervisor (invasive::HypervisorComponent, its Lua policy, a model
//   of the partition's cores) on a ZeroMQ ROUTER at the configured endpoint;
//   the iScheduler (invasive::SchedulerComponent, its Lua policy) on a
//   DEALER connected to it, or, with scheduler = "external", another batch
//   system's iScheduler connected instead.
//
// The engine stays the authority (docs/design.md §2): the partition's pass
// is NegotiationPolicy's, whose offered queue feeds the iScheduler and which
// issues each agreed start as a checked start on the agreed cores. The
// model of the cores follows the engine's state every turn (jobs that end,
// nodes down or drained, a restart), never the other way round.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "daemon_config.hpp"
#include "negotiation_events.hpp"
#include "negotiation_policy.hpp"
#include "sched/engine.hpp"
#include "sched/invasive/components.hpp"
#include "sched/proto/negotiation_info.hpp"

namespace sched::daemon {

class Negotiation {
 public:
  struct Setup {
    std::string partition;
    DaemonConfig::NegotiationConfig config;
    std::string hypervisor_path;  // the policy files, resolved
    std::string scheduler_path;
    std::string endpoint;  // where to listen (the default filled in)
  };
  // What the owner publishes: nego.* events (live), and policy.reloaded or
  // policy.error when a negotiation policy file was edited.
  struct Sinks {
    std::function<void(const std::string& partition, const NegoEvent&)> event;
    std::function<void(const std::string& partition, bool ok, const std::string& message)> reload;
  };

  // Loads both policies and binds the ROUTER (connects the DEALER). Throws
  // std::runtime_error, naming the partition, when a policy does not load
  // or the endpoint cannot be bound.
  Negotiation(zmq::context_t& context, Engine& engine, Setup setup, Sinks sinks);
  ~Negotiation();

  const std::string& partition() const { return setup_.partition; }
  // The endpoint bound (a port of 0 resolved).
  const std::string& endpoint() const { return endpoint_; }
  // The engine's policy for the partition's passes.
  std::shared_ptr<NegotiationPolicy> policy() const { return policy_; }
  // The sockets the daemon's poll must wake for.
  void add_poll_items(std::vector<zmq::pollitem_t>& items);

  // One turn of the daemon's loop (before and after its passes): messages
  // in, the model brought to the engine's state, agreed starts handed to
  // the engine and their outcomes taken, timers, messages out.
  void turn(double now);
  // Loads an edited policy file; a broken edit keeps the running version.
  void reload_policies();

  proto::NegotiationInfo info() const;

 private:
  bool internal() const { return scheduler_ != nullptr; }
  void receive(double now);
  void take_outcomes();
  void follow_engine(double now);
  void feed_scheduler(double now);
  void take_job_events();
  void send();
  void emit(const NegoEvent& event);

  zmq::context_t& context_;
  Engine& engine_;
  Setup setup_;
  Sinks sinks_;
  zmq::socket_t router_;
  std::optional<zmq::socket_t> dealer_;
  std::string endpoint_;
  std::string peer_;  // the iScheduler's routing id (the last that spoke)

  std::unique_ptr<invasive::HypervisorPolicy> hpolicy_;
  std::unique_ptr<invasive::SchedulerPolicy> spolicy_;
  invasive::Partition model_;
  invasive::HypervisorComponent hypervisor_;
  std::unique_ptr<invasive::SchedulerComponent> scheduler_;
  std::shared_ptr<NegotiationPolicy> policy_;
  NegoWatch watch_;
  invasive::MessageCounts messages_;

  // Agreed jobs the engine has not yet started, with their cores.
  std::map<JobId, std::vector<proto::NegoPlacement>> starting_;
  // Suspended jobs the iHypervisor resumed that the engine has not yet.
  std::set<JobId> resuming_;
  // Jobs handed to the internal iScheduler and still pending in the engine.
  std::set<JobId> fed_;
  std::uint64_t seen_passes_ = 0;
  std::uint64_t seen_version_ = ~std::uint64_t{0};  // the engine's state, as last followed
  bool started_ = false;                            // PROTOCOL_INIT sent
  bool stranger_logged_ = false;
  std::int64_t start_refusals_ = 0;
  std::optional<proto::NegoStatus> last_status_;
};

}  // namespace sched::daemon
