// schedd's configuration (conf/sched.toml, docs/admin.md): endpoints, the
// scheduler's tick and policy, where state lives, node health timing and
// power. Every key has a built-in default, so schedd runs with no file at
// all, listening on loopback only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"
#include "sched/partition.hpp"
#include "sched/priority.hpp"

namespace sched::daemon {

enum class NodeFailureAction { Fail, Requeue };

struct DaemonConfig {
  // [server]
  std::string client_endpoint = "tcp://127.0.0.1:7100";
  std::string agent_endpoint = "tcp://127.0.0.1:7101";
  std::string event_endpoint = "tcp://127.0.0.1:7102";
  std::string state_dir;  // default: $XDG_STATE_HOME/sched or ~/.local/state/sched
  std::size_t max_message_bytes = 4 << 20;
  // The most entries one page of jobs.query, acct or nodes.query holds (a
  // request's limit above it is cut down; pages are also bounded by bytes).
  std::size_t max_page_items = 10000;

  // [scheduler]
  double tick_s = 1;
  std::string policy = "easy_backfill";  // a name in policy_dir, or a path
  std::string policy_dir;                // default: default_policy_dir()
  double policy_check_s = 1;             // how often the policy file is checked for edits
  PolicyParams params;                   // [scheduler.params]
  // A live adaptation whose processes have not all committed this long after
  // it began is rolled back (window not yet open) or fails the job (open).
  double adapt_timeout_s = 20;
  double adapt_backoff_s = 30;  // after a rollback, no resize of the job for this long
  // MTCT (issue 17 item 5): the ratio a policy sees is over this many
  // seconds of recent measurements (0: all since the job's last
  // adaptation), and reaches it when it moved by more than this fraction.
  double mtct_window_s = 60;
  double mtct_refresh_fraction = 0.1;
  // A pending job whose dependency can never be met is cancelled (Slurm's
  // SchedulerParameters=kill_invalid_depend); false: it waits, shown as
  // DependencyNeverSatisfied, until cancelled.
  bool kill_invalid_depend = false;
  // ---- job arrays (issue 18 item 1)
  // Slurm's MaxArraySize: --array indices run from 0 to max_array_size - 1.
  int max_array_size = 10001;
  // Slurm's MinJobAge (issue 15): an ended job stays in memory this long,
  // then only in the journal, where `sched show` and `sched acct` find it.
  double min_job_age_s = 300;

  // ---- priority (issue 18 item 5)
  // [priority] weights, max age, fair-share half-life, calc period and
  // [priority.shares]; [qos.NAME] priority = N ("normal" always exists).
  PriorityConfig priority;

  // [policy]
  // Seconds one pass of the policy may run (the injected clock's monotonic
  // time); a pass over it fails. 0: no time bound.
  double policy_time_limit_s = 0.5;
  // Live passes in a row that may fail before the last good policy is put
  // back (policy.reverted). 0: never revert.
  int policy_revert_after_failures = 3;

  // [nodes]
  double heartbeat_s = 2;    // agents send one this often
  double down_after_s = 10;  // no heartbeat for this long: the node is DOWN
  NodeFailureAction on_failure = NodeFailureAction::Fail;
  double kill_grace_s = 5;     // SIGTERM, then SIGKILL after this
  double kill_timeout_s = 30;  // no exit report this long after a kill: the job ends anyway
  // With on_failure = requeue, a job on a lost node is requeued once its old
  // run is known dead (its agent registered clean, or reported the exit), or
  // after this long; its node stays out of use meanwhile.
  double fence_timeout_s = 60;

  // [auth] (docs/security.md): who sends each client request.
  std::string auth_type = "munge";  // the only type: MUNGE credentials
  std::string munge_socket;         // empty: libmunge's default (/run/munge/munge.socket.2)
  // A client session ends after this long without a request (docs/security.md §2.1).
  double session_ttl_s = 600;
  // Users who may use the admin verbs, besides root and schedd's own user.
  std::vector<std::string> admins;
  // [urgent] users: who may submit urgent jobs (--urgent), besides admins.
  std::vector<std::string> urgent_users;

  // [limits] per user; 0: no limit.
  int max_pending_jobs_per_user = 0;
  double submissions_per_second_per_user = 0;  // the token bucket's rate
  int submission_burst_per_user = 0;  // the bucket's size; 0: one second's worth (at least 1)

  // [security] (docs/security.md §3). Default: state_dir/keys/schedd.key
  // and state_dir/keys/authorized_agents, created when missing (a new key
  // pair; no agent authorised). A file configured here must exist.
  std::string secret_key_file;
  std::string authorized_agents_file;

  // [jobs]
  // Submissions whose user is root are refused unless this is set (the
  // local cluster's `sched cluster up` sets it: it runs as its user).
  bool allow_root_jobs = false;
  // ---- MPI (issue 16 item 2): what `sched run` without --mpi serves its
  // ranks: "none", "pmi2" or "pmi1" (Slurm's MpiDefault).
  std::string mpi_default = "none";

  // [power]
  double idle_w_per_node = 71;
  double corridor_lower_w = 0;  // 0/0: no corridor
  double corridor_upper_w = 0;

  // ---- issue 19
  // [log] level (trace, debug, info, warn, error) and file ("": stderr, the
  // journal under systemd); --log-level and --log-file win.
  std::string log_level = "info";
  std::string log_file;

  // [http] (docs/metrics.md, docs/admin.md "Web view"): where the read-only
  // HTTP server listens, "HOST:PORT" (port 0: any free one); "" (the
  // default): no server. /metrics for Prometheus, / for the web view.
  std::string http_listen;

  // ---- partitions (issue 20 item 1; docs/admin.md "Partitions"):
  // [partitions.NAME], in name order. None: one implicit partition, "batch",
  // with every node and the [scheduler] policy.
  // [partitions.NAME.negotiation] (issue 20 items 3, 5; docs/admin.md
  // "Negotiated partitions"): a cores partition scheduled by the negotiation
  // protocol (docs/negotiation.md), schedd running both sides.
  struct NegotiationConfig {
    // The iHypervisor's and the iScheduler's Lua policies (names in
    // policy_dir, or files), hot-reloaded.
    std::string hypervisor_policy = "negotiation/socket_pack";
    std::string scheduler_policy = "negotiation/wait_first";
    // Where the iHypervisor's ROUTER listens; "": ipc://STATE_DIR/nego-NAME.sock.
    std::string endpoint;
    // internal: schedd's own iScheduler schedules the partition; external:
    // another batch system's iScheduler connects to the endpoint.
    std::string scheduler = "internal";
    // PROTOCOL_INIT (docs/negotiation.md §3): attempts per transaction, the
    // timeout of an answer, the STATUS_REPORT interval (0: none).
    int max_attempts = 3;
    double timeout_s = 10;
    double status_interval_s = 30;
    bool operator==(const NegotiationConfig&) const = default;
  };
  struct PartitionConfig {
    PartitionSpec spec;
    std::string policy;   // its own policy (a name in policy_dir, or a file); "": [scheduler]'s
    PolicyParams params;  // [scheduler.params] with [partitions.NAME.params] over them
    std::optional<NegotiationConfig> negotiation;  // present: the partition is negotiated
  };
  std::vector<PartitionConfig> partitions;
};

// Reads a config file. Unknown keys and wrong types are errors that name the
// key and the file (a typo must not silently fall back to a default).
// Throws std::runtime_error.
DaemonConfig load_config(const std::string& path);
// Fills state_dir, policy_dir and the key files when empty; call after
// load_config.
void complete_config(DaemonConfig& config);
// The key files complete_config fills in: schedd creates them when missing.
std::string default_secret_key_file(const DaemonConfig& config);
std::string default_authorized_agents_file(const DaemonConfig& config);

// A partition's time limit as Slurm writes MaxTime: a number of minutes, or
// "[D-]HH:MM:SS", "MM:SS", "D-HH", "D-HH:MM", or "UNLIMITED" / "INFINITE"
// (0: none); seconds, or nullopt when it is none of these.
std::optional<double> parse_partition_time(const std::string& text);

// Why `listen` is no [http] listen value ("HOST:PORT", a port from 0 to
// 65535); nullopt when it is one.
std::optional<std::string> http_listen_problem(const std::string& listen);

}  // namespace sched::daemon
