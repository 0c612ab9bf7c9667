#include "cluster.hpp"

#include <pwd.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sched::testing {

LocalCluster::LocalCluster(ClusterOptions options)
    : options_(std::move(options)), dir_("sched-it") {
  state_dir_ = dir_.str() + "/state";
  std::filesystem::create_directories(work_dir());
  // Job users reach their job's directory in the agents' spools in here
  // (mkdtemp made it 0700); they still list nothing.
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all |
                                                std::filesystem::perms::group_exec |
                                                std::filesystem::perms::others_exec);
  const auto endpoint = [] { return "tcp://127.0.0.1:" + std::to_string(proto::free_tcp_port()); };
  client_endpoint_ = endpoint();
  agent_endpoint_ = endpoint();
  event_endpoint_ = endpoint();
  config_path_ = dir_.str() + "/sched.toml";
  std::ofstream config(config_path_);
  config << "[server]\nclient_endpoint = \"" << client_endpoint_ << "\"\nagent_endpoint = \""
         << agent_endpoint_ << "\"\nevent_endpoint = \"" << event_endpoint_ << "\"\nstate_dir = \""
         << state_dir_ << "\"\n\n[scheduler]\ntick_s = " << options_.tick_s << "\npolicy = \""
         << options_.policy
         << "\"\npolicy_check_s = 0.2\nadapt_timeout_s = " << options_.adapt_timeout_s
         << "\nadapt_backoff_s = " << options_.adapt_backoff_s
         << "\n\n[jobs]\nallow_root_jobs = " << (options_.allow_root_jobs ? "true" : "false")
         << "\n\n[nodes]\nheartbeat_s = " << options_.heartbeat_s
         << "\ndown_after_s = " << options_.down_after_s
         << "\nkill_grace_s = " << options_.kill_grace_s << "\non_failure = \""
         << options_.on_failure << "\"\nfence_timeout_s = " << options_.fence_timeout_s << "\n"
         << options_.extra_config;
  config.close();
  start_schedd();
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
  client_ = std::make_unique<proto::Client>(context_, client_endpoint_, std::chrono::seconds(5));
}

void LocalCluster::kill_schedd(int sig) {
  client_.reset();
  schedd_->signal(sig);
  schedd_->wait(std::chrono::seconds(5));
}

void LocalCluster::signal_schedd(int sig) { schedd_->signal(sig); }

void LocalCluster::start_agent(const std::string& node, int cores) {
  std::vector<std::string> argv{SCHED_NODEAGENT_BIN,
                                "--engine",
                                agent_endpoint_,
                                "--node-name",
                                node,
                                "--cores",
                                std::to_string(cores),
                                "--spool-dir",
                                dir_.str() + "/spool-" + node,
                                "--log-level",
                                options_.log_level};
  if (options_.agent_allow_root_jobs) argv.emplace_back("--allow-root-jobs");
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
    const auto nodes = client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
    int up = 0;
    for (const auto& n : nodes.nodes) up += n.state != "down";
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
  request.job.user = current_user_name();
  request.job.nodes = nodes;
  request.job.walltime = walltime;
  request.job.script = script;
  request.job.workdir = work_dir();
  return client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
}

std::int64_t LocalCluster::submit(proto::SubmitRequest request) {
  return client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
}

std::string current_user_name() {
  if (const passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
  return std::to_string(::geteuid());
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

}  // namespace sched::testing
