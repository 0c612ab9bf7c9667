// schedd: the engine in real time (docs/design.md §2, §5). One thread, one loop:
//
//   poll the client and agent sockets (until the next timer)
//   → each message becomes an engine input (or a query answered from state)
//   → timers: time limits (when due), tick, node health, policy file edits,
//     kill timeouts
//   → scheduling passes while one is due; enactor results fed back
//     (sched::settle, sched/driver.hpp)
//   → the journal commits; then replies and agent commands go out
//
// Every engine event is journaled (SQLite) and published on the PUB socket.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "access.hpp"
#include "agent_directory.hpp"
#include "authorized_agents.hpp"
#include "daemon_config.hpp"
#include "handlers/context.hpp"
#include "handlers/receive.hpp"
#include "handlers/route_table.hpp"
#include "http/front.hpp"
#include "live_enactor.hpp"
#include "negotiation.hpp"
#include "outbox.hpp"
#include "resize_requests.hpp"
#include "sched/engine.hpp"
#include "sched/env.hpp"
#include "sched/policy_host.hpp"
#include "sched/proto/curve.hpp"
#include "sched/proto/envelope.hpp"
#include "state_store.hpp"
#include "step_table.hpp"
#include "zap_handler.hpp"

namespace sched::daemon {

class Daemon : private EventSink {
 public:
  // Binds the sockets, opens the journal, restores its jobs and loads the
  // policy. Throws std::runtime_error with a clear message when it cannot
  // (an endpoint in use, an unwritable state folder, a broken journal).
  explicit Daemon(DaemonConfig config);
  ~Daemon() override;

  // Runs until `stop` becomes true (checked at least every 100 ms). When
  // `reload` becomes true (SIGHUP), the authorised agent keys are read again
  // and it is set back to false.
  void run(const std::atomic<bool>& stop, std::atomic<bool>* reload = nullptr);

  // ---- issue 19
  // What SIGHUP also does: `source` reads the config again (with the command
  // line's overrides, and sets up the log from it), throwing when it cannot;
  // the keys schedd can take live are applied (config_reload.hpp), the others
  // logged as waiting for a restart.
  void set_config_source(std::function<DaemonConfig()> source) {
    config_source_ = std::move(source);
  }

  // schedd's CURVE public key (Z85), which agents and remote clients need.
  const std::string& public_key() const { return key_.public_key; }

  // The endpoints actually bound (a configured port 0 or * is resolved).
  const std::string& client_endpoint() const { return client_endpoint_; }
  const std::string& agent_endpoint() const { return agent_endpoint_; }
  const std::string& event_endpoint() const { return event_endpoint_; }
  // http://HOST:PORT of the metrics endpoint and web view; "" when [http] is off.
  std::string http_url() const { return http_ ? http_->url() : std::string(); }

 private:
  // ---- loop steps
  void drain_clients();
  void drain_agents();
  void on_timers(double now);
  void commit();

  // ---- messages (daemon_messages.cpp; their handlers are in handlers/)
  DaemonParts parts();

  void node_lost(const std::string& node, const std::string& why);

  // ---- link security (docs/security.md §3)
  // Reads (or, at their default places, creates) the key pair and the
  // authorised agent keys, starts the ZAP handler and makes the agent socket
  // (and the client and event sockets off loopback) CURVE servers. Before
  // any socket binds.
  void secure_sockets();
  // A refused peer: logged and published as auth.denied, rate-limited.
  void auth_denied(Event event);

  // ---- journal and events
  void on_event(const Event& event) override;
  void reload_config();  // ---- issue 19
  // ---- issue 20 item 1: the partitions' own policies, loaded at start
  void load_partition_policies(const LuaPolicyOptions& options);
  // What a reloaded config changes of the partitions: limits and states
  // live; the rest named in `restart`.
  void reload_partitions(const DaemonConfig& fresh, std::vector<std::string>& applied,
                         std::vector<std::string>& restart);
  void save_job(const Job& job);
  void save_nodes();
  // ---- issue 20 item 1: an admin's partition states outlive a restart
  void save_partition_states(const Event& event);
  void restore_partition_states();
  void save_counters();  // jobs_submitted, messages, bad_messages, when changed
  void recover();
  // Fair-share usage after a restart: the journal's ended jobs, each charged
  // at its end time and so decayed to now (issue 18 item 5).
  void rebuild_fair_share();
  void lock_state_dir();

  DaemonConfig config_;
  SystemClock clock_;
  zmq::context_t context_;
  zmq::socket_t clients_;
  zmq::socket_t agents_socket_;
  zmq::socket_t events_;
  proto::curve::KeyPair key_;
  std::unique_ptr<AuthorizedAgentsFile> agent_keys_;
  std::unique_ptr<ZapHandler> zap_;
  std::string client_endpoint_;
  std::string agent_endpoint_;
  std::string event_endpoint_;
  Outbox outbox_;
  AgentDirectory agents_;
  StepTable steps_;       // before the enactor, whose adaptations use it
  PmiFences pmi_fences_;  // issue 16 item 2: MPI steps' PMI fences
  PmixExchange pmix_;     // issue 16 item 2: MPI_Comm_spawn's publish, lookup, connect
  LiveEnactor enactor_;
  Engine engine_;
  std::unique_ptr<PolicyHost> policy_;
  // ---- issue 20 item 1: the hosts of partitions' own policies, by partition
  std::map<std::string, std::unique_ptr<PolicyHost>> partition_policies_;
  std::unique_ptr<StateStore> store_;
  // ---- issue 22: deployed policy versions (after store_, which it uses)
  std::unique_ptr<PolicyVersions> policy_versions_;

  int lock_fd_ = -1;
  double started_at_ = 0;
  double next_tick_ = 0;
  std::optional<double> next_time_limit_;  // this loop turn's, from the engine
  double next_policy_check_ = 0;
  // Jobs restored from the journal whose leader's agent has not yet said
  // whether it runs them: job → when they count as lost.
  std::map<JobId, double> awaiting_agent_;
  // ---- issue 15: ended jobs in the order they ended (end time, id); each
  // is dropped from the engine min_job_age_s after (the journal keeps it).
  std::deque<std::pair<double, JobId>> ended_jobs_;
  void forget_old_jobs(double now);
  // Ends the fenced jobs of nodes whose fence_timeout_s has run out.
  void expire_fences(double now);
  // The latest perf.report of each node of a job: MTCT = Σ comm / Σ compute.
  std::map<JobId, std::map<std::string, NodePhases>> phases_;
  // ---- issue 17 item 1: evolving jobs' live requests, answered in commit()
  ResizeRequests resizes_;
  // ---- issue 15: client sessions, in memory only (a restart ends them)
  auth::Sessions sessions_;
  // Why a node is down or drained, for `sched nodes`.
  std::map<std::string, std::string> node_reasons_;
  // Where jobs that hold nodes run, for their record once they have ended.
  std::map<JobId, std::vector<std::string>> last_nodes_;
  std::uint64_t messages_ = 0;
  std::uint64_t bad_messages_ = 0;
  std::uint64_t submitted_ = 0;
  // The counters as last journaled (jobs_submitted, messages, bad_messages).
  std::array<std::uint64_t, 3> saved_counters_{};
  // Bounds on the log lines about bad messages, per socket.
  LogLimiter client_log_;
  LogLimiter agent_log_;
  LogLimiter auth_log_;  // auth.denied: log lines and events alike
  // Message type → handler, one table per socket; built with the daemon, so
  // that a type routed twice stops it at start-up.
  const RouteTable client_routes_ = client_routes();
  const RouteTable agent_routes_ = agent_routes();
  Access access_{config_, [this](Event event) { auth_denied(std::move(event)); }};
  std::function<DaemonConfig()> config_source_;  // ---- issue 19
  // ---- issue 19 items 4, 5: /metrics and the web view ([http] listen). Fed
  // on this thread; serves from its own (http/published.hpp).
  std::unique_ptr<http::Front> http_;
  void publish_http();
  // ---- issue 20 items 3, 5: the negotiated partitions (schedd/negotiation.hpp),
  // made after the partitions' policies; each one's pass is its negotiation's.
  std::vector<std::unique_ptr<Negotiation>> negotiations_;
  void start_negotiations();
  // A nego.* event: logged and published live (not journaled).
  void publish_nego(const std::string& partition, const NegoEvent& event);
};

}  // namespace sched::daemon
