#include "cluster.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "munge_support.hpp"
#include "sched/auth/credential.hpp"
#include "test_paths.hpp"

namespace sched::testing {

namespace {

// Every process the tests start (schedd, agents, jobs, the CLI) gets its
// credentials from the tests' munged.
void use_test_munged() {
  const std::string& munge_socket = TestMunged::socket();
  if (!munge_socket.empty()) ::setenv("SCHED_MUNGE_SOCKET", munge_socket.c_str(), 1);
}

}  // namespace

LocalCluster::LocalCluster(ClusterOptions options)
    : options_(std::move(options)), dir_("sched-it") {
  use_test_munged();
  state_dir_ = dir_.str() + "/state";
  std::filesystem::create_directories(work_dir());
  // Job users reach their job's directory in the agents' spools in here
  // (mkdtemp made it 0700); they still list nothing.
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all |
                                                std::filesystem::perms::group_exec |
                                                std::filesystem::perms::others_exec);
  schedd_key_ = proto::curve::write_key_pair(keys_dir(), "schedd");
  std::ofstream(authorized_agents_file()) << "# agent keys of the test cluster\n";
  config_path_ = dir_.str() + "/sched.toml";
  // The ports are picked before schedd binds them, so a test running beside
  // this one may take one in between: then pick again.
  for (int attempt = 1;; ++attempt) {
    write_config();
    try {
      start_schedd();
      return;
    } catch (const std::runtime_error& error) {
      const bool port_taken =
          std::string(error.what()).find("Address already in use") != std::string::npos;
      if (!port_taken || attempt == 5) throw;
    }
  }
}

void LocalCluster::write_config() {
  const auto endpoint = [] { return "tcp://127.0.0.1:" + std::to_string(proto::free_tcp_port()); };
  client_endpoint_ = endpoint();
  agent_endpoint_ = endpoint();
  event_endpoint_ = endpoint();
  const auto bound = [&](const std::string& endpoint) {
    return "tcp://" + options_.bind_host + endpoint.substr(endpoint.rfind(':'));
  };
  std::ofstream config(config_path_);
  config << "[server]\nclient_endpoint = \"" << bound(client_endpoint_) << "\"\nagent_endpoint = \""
         << agent_endpoint_ << "\"\nevent_endpoint = \"" << bound(event_endpoint_)
         << "\"\nstate_dir = \"" << state_dir_ << "\"\n"
         << (options_.max_page_items > 0
                 ? "max_page_items = " + std::to_string(options_.max_page_items) + "\n"
                 : std::string())
         << "\n[scheduler]\ntick_s = " << options_.tick_s << "\npolicy = \"" << options_.policy
         << "\"\npolicy_check_s = 0.2\nadapt_timeout_s = " << options_.adapt_timeout_s
         << "\nadapt_backoff_s = " << options_.adapt_backoff_s
         << "\nkill_invalid_depend = " << (options_.kill_invalid_depend ? "true" : "false")
         << "\nmin_job_age_s = " << options_.min_job_age_s
         << "\n\n[jobs]\nallow_root_jobs = " << (options_.allow_root_jobs ? "true" : "false")
         << "\nmpi_default = \"" << options_.mpi_default << "\""
         << "\n\n[nodes]\nheartbeat_s = " << options_.heartbeat_s
         << "\ndown_after_s = " << options_.down_after_s
         << "\nkill_grace_s = " << options_.kill_grace_s << "\non_failure = \""
         << options_.on_failure << "\"\nfence_timeout_s = " << options_.fence_timeout_s
         << "\n\n[auth]\nsocket = \"" << TestMunged::socket() << "\"\nadmins = [";
  for (std::size_t i = 0; i < options_.admins.size(); ++i) {
    config << (i ? ", \"" : "\"") << options_.admins[i] << "\"";
  }
  config << "]\n";
  if (options_.session_ttl_s > 0) config << "session_ttl_s = " << options_.session_ttl_s << "\n";
  config << "\n[security]\nsecret_key_file = \"" << keys_dir()
         << "/schedd.key\"\nauthorized_agents_file = \"" << authorized_agents_file() << "\"\n"
         << options_.extra_config;
}

LocalCluster::~LocalCluster() {
  client_.reset();
  // SIGTERM lets an agent kill its jobs' processes before it goes.
  for (auto& [node, agent] : agents_) agent->signal(SIGTERM);
  for (auto& [node, agent] : agents_) agent->wait(std::chrono::seconds(5));
  agents_.clear();
  if (schedd_) {
    schedd_->signal(SIGTERM);
    if (!schedd_->wait(std::chrono::seconds(5))) schedd_.reset();
  }
}

void LocalCluster::start_schedd() {
  client_.reset();
  schedd_ =
      std::make_unique<Process>(std::vector<std::string>{SCHED_SCHEDD_BIN, "--config", config_path_,
                                                         "--log-level", options_.log_level},
                                dir_.str() + "/schedd.log");
  // schedd prints its endpoints once it listens.
  const auto line = schedd_->read_line(std::chrono::seconds(10));
  if (!line || line->rfind("clients ", 0) != 0) {
    throw std::runtime_error("schedd did not start: " + line.value_or("(no output)") + "\n" +
                             logs());
  }
  client_ = connect();
}

std::unique_ptr<proto::Client> LocalCluster::connect(std::chrono::milliseconds timeout) {
  const bool encrypted = !proto::curve::is_loopback_endpoint("tcp://" + options_.bind_host + ":1");
  return std::make_unique<proto::Client>(context_, client_endpoint_, timeout,
                                         auth::munge_signer(TestMunged::socket()),
                                         encrypted ? schedd_key_.public_key : std::string());
}

void LocalCluster::kill_schedd(int sig) {
  client_.reset();
  schedd_->signal(sig);
  schedd_->wait(std::chrono::seconds(5));
}

void LocalCluster::signal_schedd(int sig) { schedd_->signal(sig); }

proto::curve::KeyPair LocalCluster::agent_key(const std::string& node) {
  if (auto it = agent_keys_.find(node); it != agent_keys_.end()) return it->second;
  // A pair made before (`sched keys new`) is kept, and one authorised before
  // is not listed twice. schedd reads the file again when it changes (and
  // when an unknown key knocks).
  const auto pair = proto::curve::write_key_pair(keys_dir(), node);
  if (read_file(authorized_agents_file()).find(pair.public_key) == std::string::npos) {
    std::ofstream(authorized_agents_file(), std::ios::app)
        << pair.public_key << " " << node << "\n";
  }
  return agent_keys_[node] = pair;
}

void LocalCluster::start_agent(const std::string& node, int cores,
                               const std::vector<std::string>& extra) {
  agent_key(node);
  std::vector<std::string> argv{SCHED_NODEAGENT_BIN,
                                "--engine",
                                agent_endpoint_,
                                "--node-name",
                                node,
                                "--cores",
                                std::to_string(cores),
                                "--spool-dir",
                                dir_.str() + "/spool-" + node,
                                "--secret-key-file",
                                keys_dir() + "/" + node + ".key",
                                "--server-public-key-file",
                                keys_dir() + "/schedd.pub",
                                "--log-level",
                                options_.log_level};
  if (options_.agent_allow_root_jobs) argv.emplace_back("--allow-root-jobs");
  argv.insert(argv.end(), extra.begin(), extra.end());
  agents_[node] = std::make_unique<Process>(argv, dir_.str() + "/agent-" + node + ".log");
}

void LocalCluster::kill_agent(const std::string& node, int sig) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;
  it->second->signal(sig);
  it->second->wait(std::chrono::seconds(5));
  agents_.erase(it);
}

bool LocalCluster::wait_nodes_up(int count) {
  return eventually([&] {
    // Every page (a test may make them small: max_page_items).
    proto::NodesQuery query;
    int up = 0;
    while (true) {
      const auto nodes = client().call<proto::NodeList>(proto::type::kNodesQuery, query);
      for (const auto& n : nodes.nodes) up += n.state != "down";
      if (!nodes.next_cursor) break;
      query.cursor = nodes.next_cursor;
    }
    return up >= count;
  });
}

proto::Client& LocalCluster::client() {
  if (!client_) throw std::runtime_error("schedd is not running");
  return *client_;
}

std::int64_t LocalCluster::submit(const std::string& script, int nodes, double walltime,
                                  const std::string& name) {
  proto::SubmitRequest request;
  request.job.name = name;
  request.job.nodes = nodes;
  request.job.walltime = walltime;
  request.job.script = script;
  request.job.workdir = work_dir();
  return client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
}

std::int64_t LocalCluster::submit(proto::SubmitRequest request) {
  return client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
}

proto::JobInfo LocalCluster::job(std::int64_t id) {
  return client().call<proto::JobReply>(proto::type::kJobShow, proto::JobRef{id}).job;
}

bool LocalCluster::wait_state(std::int64_t id, const std::string& state,
                              std::chrono::milliseconds timeout) {
  return eventually([&] { return job(id).state == state; }, timeout);
}

std::string LocalCluster::logs() const {
  std::ostringstream out;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path());
    out << "---- " << entry.path().filename().string() << "\n" << in.rdbuf() << "\n";
  }
  return out.str();
}

CliRun run_sched(const std::string& endpoint, const std::vector<std::string>& args,
                 std::chrono::milliseconds limit) {
  using std::chrono::milliseconds;
  use_test_munged();  // also when no cluster was made, as for a dead endpoint
  TempDir dir("sched-cli");
  const std::string err_path = dir.str() + "/stderr";
  std::vector<std::string> argv = {SCHED_CLI_BIN, "--endpoint", endpoint};
  argv.insert(argv.end(), args.begin(), args.end());
  Process process(argv, err_path);
  CliRun run;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const auto left = [&] {
    return std::max(
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now()),
        milliseconds(0));
  };
  while (auto line = process.read_line(left())) run.out += *line + "\n";
  if (const auto status = process.wait(left()); status && WIFEXITED(*status)) {
    run.status = WEXITSTATUS(*status);
  }
  run.err = read_file(err_path);
  return run;
}

CliRun run_sched(LocalCluster& cluster, const std::vector<std::string>& args) {
  return run_sched(cluster.client_endpoint(), args);
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const proto::ProtoError& e) {
    return e.code() + ": " + e.what();
  }
  return "no error";
}

}  // namespace sched::testing
