// A local cluster for integration tests: schedd on loopback with free ports
// and a temporary state folder, and node agents as virtual nodes. Requests
// carry MUNGE credentials from the test binary's munged (munge_support.hpp),
// whose socket schedd's config names and $SCHED_MUNGE_SOCKET tells every
// process the tests start. Its links are those of a real cluster: every
// agent has its own CURVE key, bound to its node's name in schedd's
// authorised-keys file.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "process.hpp"
#include "sched/proto/curve.hpp"
#include "sched/proto/messages.hpp"
#include "sched/proto/transport.hpp"

namespace sched::testing {

struct ClusterOptions {
  std::string policy = "fcfs";
  double tick_s = 0.2;
  double heartbeat_s = 0.2;
  double down_after_s = 1.5;
  double kill_grace_s = 1;
  std::string on_failure = "fail";
  double fence_timeout_s = 3;
  double adapt_timeout_s = 20;
  double adapt_backoff_s = 30;
  bool kill_invalid_depend = false;  // [scheduler] kill_invalid_depend
  double min_job_age_s = 300;        // [scheduler] min_job_age_s
  int max_page_items = 0;            // [server] max_page_items; 0: the default
  std::vector<std::string> admins;   // [auth] admins
  double session_ttl_s = 0;          // [auth] session_ttl_s; 0: the default
  std::string extra_config;          // appended to the generated sched.toml
  // Where schedd binds its client and event sockets: off loopback (0.0.0.0)
  // they are CURVE servers, and the cluster's client uses schedd's key. It
  // connects through 127.0.0.1 either way.
  std::string bind_host = "127.0.0.1";
  std::string log_level = "debug";
  // schedd's [jobs] allow_root_jobs: the tests run as root in CI, and the
  // tests' jobs are the tester's.
  bool allow_root_jobs = true;
  bool agent_allow_root_jobs = true;  // the agents' own --allow-root-jobs
  std::string mpi_default = "none";   // [jobs] mpi_default
};

class LocalCluster {
 public:
  explicit LocalCluster(ClusterOptions options = {});
  ~LocalCluster();

  // (Re)starts schedd on the same state folder and endpoints.
  void start_schedd();
  void kill_schedd(int sig);
  pid_t schedd_pid() const { return schedd_->pid(); }  // for benchmarks (its memory)
  // Sends schedd a signal without waiting (SIGSTOP, SIGCONT).
  void signal_schedd(int sig);
  // Starts a node agent for a virtual node (name n1, n2, ...).
  // `extra`: more nodeagent options (--gpus 2, ...).
  void start_agent(const std::string& node, int cores = 1,
                   const std::vector<std::string>& extra = {});
  void kill_agent(const std::string& node, int sig);
  // The key pair of a node's agent, made (and authorised for that node) on
  // first use.
  proto::curve::KeyPair agent_key(const std::string& node);
  // schedd's key pair and its authorised-keys file.
  const proto::curve::KeyPair& schedd_key() const { return schedd_key_; }
  std::string authorized_agents_file() const { return keys_dir() + "/authorized_agents"; }
  std::string keys_dir() const { return dir_.str() + "/keys"; }
  // Waits until schedd lists `count` nodes up.
  bool wait_nodes_up(int count);

  proto::Client& client();
  // A new connection whose requests carry this process's credentials.
  std::unique_ptr<proto::Client> connect(
      std::chrono::milliseconds timeout = std::chrono::seconds(5));
  const std::string& state_dir() const { return state_dir_; }
  std::string work_dir() const { return dir_.str() + "/work"; }
  const std::string& event_endpoint() const { return event_endpoint_; }
  const std::string& client_endpoint() const { return client_endpoint_; }
  const std::string& agent_endpoint() const { return agent_endpoint_; }

  // Submits a script as a rigid job of `nodes` nodes in the work folder.
  std::int64_t submit(const std::string& script, int nodes = 1, double walltime = 0,
                      const std::string& name = "test");
  // The same as `user`, with the request's other fields as given.
  std::int64_t submit(proto::SubmitRequest request);
  proto::JobInfo job(std::int64_t id);
  // Waits for the job to reach `state` (an end state is final).
  bool wait_state(std::int64_t id, const std::string& state,
                  std::chrono::milliseconds timeout = std::chrono::seconds(15));
  std::string logs() const;  // schedd's and the agents' stderr, for failure messages

 private:
  // Picks the endpoints and writes sched.toml.
  void write_config();

  ClusterOptions options_;
  TempDir dir_;
  std::string state_dir_;
  std::string config_path_;
  std::string client_endpoint_;
  std::string agent_endpoint_;
  std::string event_endpoint_;
  proto::curve::KeyPair schedd_key_;
  std::map<std::string, proto::curve::KeyPair> agent_keys_;
  zmq::context_t context_;
  std::unique_ptr<Process> schedd_;
  std::map<std::string, std::unique_ptr<Process>> agents_;
  std::unique_ptr<proto::Client> client_;
};

// What a run of the `sched` command did.
struct CliRun {
  int status = -1;  // the exit status; -1 when it did not exit in time or was killed
  std::string out;
  std::string err;
};

// Runs `sched --endpoint ENDPOINT ARGS...` to its end (at most `limit`).
CliRun run_sched(const std::string& endpoint, const std::vector<std::string>& args,
                 std::chrono::milliseconds limit = std::chrono::seconds(8));
CliRun run_sched(LocalCluster& cluster, const std::vector<std::string>& args);

// "code: message" of the error reply `call` gets; "no error" when it succeeds.
std::string error_of(const std::function<void()>& call);

}  // namespace sched::testing
