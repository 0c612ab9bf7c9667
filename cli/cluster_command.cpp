#include "cluster_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "connection.hpp"
#include "nodelist.hpp"
#include "sched/auth/credential.hpp"
#include "sched/auth/munge.hpp"
#include "sched/auth/private_munged.hpp"
#include "sched/proto/curve.hpp"

namespace sched::cli {
namespace fs = std::filesystem;
namespace {

fs::path default_state_dir() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) return fs::path(xdg) / "sched";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".local/state/sched";
  }
  return fs::current_path() / "sched-state";
}

// schedd and nodeagent: beside this program or in the prefix's sbin when
// installed, or where the build tree puts them.
fs::path find_program(const std::string& name, const std::string& build_subdir) {
  if (const char* dir = std::getenv("SCHED_BIN_DIR"); dir && *dir) {
    if (fs::exists(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  for (const fs::path& candidate :
       {self / name, self.parent_path() / "sbin" / name, self.parent_path() / build_subdir / name,
        self.parent_path() / "bin" / name}) {
    if (fs::exists(candidate)) return candidate;
  }
  throw std::runtime_error("cannot find " + name + " (looked beside " + self.string() +
                           " and in the build tree; set SCHED_BIN_DIR)");
}

// Starts a program in the background, detached from this terminal, its
// stdout and stderr to files.
pid_t spawn_detached(const std::vector<std::string>& argv, const fs::path& out,
                     const fs::path& err) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setsid();
    const int in = ::open("/dev/null", O_RDONLY);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || o < 0 || e < 0) _exit(127);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  // Reap it if it is our child and has ended.
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) == pid) return false;
  return ::kill(pid, 0) == 0;
}

std::string tail(const fs::path& file, std::size_t lines = 10) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += "  " + all[i] + "\n";
  }
  return out;
}

nlohmann::json read_cluster_file(const fs::path& state) {
  std::ifstream in(state / "cluster.json");
  if (!in) return nullptr;
  return nlohmann::json::parse(in, nullptr, false);
}

// The local cluster's keys (docs/security.md §3), in STATE/keys: schedd's
// and one pair per node, made once and kept; the authorised-keys file binds
// each node's key to its name. The quick start needs no set-up, and its
// agents are authenticated as a real cluster's are.
void make_keys(const fs::path& keys, int nodes) {
  proto::curve::write_key_pair(keys, "schedd");
  std::string authorized =
      "# Made by `sched cluster up`: node n<i> may register with the key keys/n<i>.pub only.\n";
  for (int i = 1; i <= nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    authorized += proto::curve::write_key_pair(keys, name).public_key + " " + name + "\n";
  }
  std::ofstream(keys / "authorized_agents") << authorized;
}

struct UpArgs {
  int nodes = 4;
  int cores = 1;
  std::string policy = "easy_backfill";
  std::string state_dir;
  std::string config;
  int port = 7100;
};

void up(const UpArgs& args) {
  const fs::path state = args.state_dir.empty() ? default_state_dir() : fs::path(args.state_dir);
  fs::create_directories(state / "logs");
  const auto existing = read_cluster_file(state);
  if (existing.is_object() && alive(existing.value("schedd", 0))) {
    throw std::runtime_error("a cluster is already up in " + state.string() + " (schedd pid " +
                             std::to_string(existing.value("schedd", 0)) +
                             "); `sched cluster down` first");
  }
  // Credentials: the munged named by $SCHED_MUNGE_SOCKET, else the system's,
  // else one of our own in the state folder (stopped by `cluster down`).
  std::string munge_socket;
  std::string munge_dir;
  if (const char* given = std::getenv("SCHED_MUNGE_SOCKET"); given && *given) {
    munge_socket = given;
  } else if (!auth::munge_answers()) {
    munge_dir = (state / "munge").string();
    munge_socket = auth::start_private_munged(munge_dir);
  }
  // Agents, and so the jobs (whose `sched` commands sign their requests),
  // inherit it.
  if (!munge_socket.empty()) ::setenv("SCHED_MUNGE_SOCKET", munge_socket.c_str(), 1);
  const std::string client = "tcp://127.0.0.1:" + std::to_string(args.port);
  const std::string agents = "tcp://127.0.0.1:" + std::to_string(args.port + 1);
  const std::string events = "tcp://127.0.0.1:" + std::to_string(args.port + 2);
  // The metrics endpoint and web view, on loopback (docs/admin.md "Web view").
  const std::string http = "127.0.0.1:" + std::to_string(args.port + 3);
  const fs::path keys = state / "keys";
  make_keys(keys, args.nodes);
  std::vector<std::string> schedd_argv = {find_program("schedd", "schedd").string(),
                                          "--state-dir",
                                          state.string(),
                                          "--client-endpoint",
                                          client,
                                          "--agent-endpoint",
                                          agents,
                                          "--event-endpoint",
                                          events,
                                          "--http-listen",
                                          http,
                                          "--secret-key-file",
                                          (keys / "schedd.key").string(),
                                          "--authorized-agents-file",
                                          (keys / "authorized_agents").string()};
  if (!munge_socket.empty())
    schedd_argv.insert(schedd_argv.end(), {"--munge-socket", munge_socket});
  if (!args.config.empty()) {
    schedd_argv.insert(schedd_argv.begin() + 1, {"--config", fs::absolute(args.config).string()});
  } else {
    // The embedded default runs jobs as whoever started the cluster, root
    // included (docs/admin.md); a given config decides for itself.
    schedd_argv.insert(schedd_argv.end(), {"--policy", args.policy, "--allow-root-jobs"});
  }
  const fs::path logs = state / "logs";
  const pid_t schedd = spawn_detached(schedd_argv, logs / "schedd.out", logs / "schedd.log");
  // schedd prints its endpoints once it listens.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (true) {
    std::ifstream out(logs / "schedd.out");
    std::string first;
    if (std::getline(out, first) && first.rfind("clients ", 0) == 0) break;
    if (!alive(schedd) || std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("schedd did not start; its log says:\n" + tail(logs / "schedd.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  nlohmann::json file = {{"schedd", schedd},
                         {"client_endpoint", client},
                         {"agent_endpoint", agents},
                         {"event_endpoint", events},
                         {"http", "http://" + http + "/"},
                         {"state_dir", state.string()},
                         {"munge_socket", munge_socket},
                         {"munge_dir", munge_dir},
                         {"agents", nlohmann::json::object()}};
  const std::string agent_program = find_program("nodeagent", "nodeagent").string();
  std::vector<std::string> names;
  for (int i = 1; i <= args.nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    names.push_back(name);
    const pid_t pid = spawn_detached(
        {agent_program, "--engine", agents, "--node-name", name, "--cores",
         std::to_string(args.cores), "--spool-dir", (state / "spool" / name).string(),
         "--secret-key-file", (keys / (name + ".key")).string(), "--server-public-key-file",
         (keys / "schedd.pub").string(), "--allow-root-jobs"},
        "/dev/null", logs / ("agent-" + name + ".log"));
    file["agents"][name] = pid;
  }
  std::ofstream(state / "cluster.json") << file.dump(2) << "\n";

  zmq::context_t context(1);
  proto::Client connection(context, client, std::chrono::seconds(5),
                           auth::munge_signer(munge_socket));
  const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (true) {
    const auto list = connection.call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
    int up = 0;
    for (const auto& node : list.nodes) up += node.state != "down";
    if (up >= args.nodes) break;
    if (std::chrono::steady_clock::now() > ready_by) {
      throw std::runtime_error(std::to_string(up) + " of " + std::to_string(args.nodes) +
                               " nodes came up; see the logs in " + logs.string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cout << "cluster up: schedd (pid " << schedd << ") and " << args.nodes << " nodes "
            << compress_nodelist(names) << "\n  clients " << client << "\n  state   "
            << state.string() << "\n  logs    " << logs.string() << "\n";
  std::cout << "  web     http://" << http << "/  (metrics: http://" << http << "/metrics)\n";
  if (!munge_dir.empty()) {
    std::cout << "  munge   " << munge_socket << " (its own munged; other state folders: "
              << "export SCHED_MUNGE_SOCKET=" << munge_socket << ")\n";
  }
}

void down(const std::string& state_dir) {
  const fs::path state = state_dir.empty() ? default_state_dir() : fs::path(state_dir);
  const auto file = read_cluster_file(state);
  if (!file.is_object()) {
    std::cout << "no local cluster in " << state.string() << "\n";
    return;
  }
  std::vector<pid_t> pids;
  for (const auto& [name, pid] : file["agents"].items()) pids.push_back(pid.get<pid_t>());
  pids.push_back(file.value("schedd", 0));
  int stopped = 0;
  for (pid_t pid : pids) {
    if (!alive(pid)) continue;
    ::kill(pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (alive(pid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (alive(pid)) ::kill(pid, SIGKILL);
    ++stopped;
  }
  // Our own munged last: the others needed it until they stopped.
  if (const std::string munge_dir = file.value("munge_dir", ""); !munge_dir.empty()) {
    stopped += auth::stop_private_munged(munge_dir) ? 1 : 0;
  }
  fs::remove(state / "cluster.json");
  std::cout << "cluster down: " << stopped << " processes stopped\n";
}

void status(const std::string& state_dir) {
  const fs::path state = state_dir.empty() ? default_state_dir() : fs::path(state_dir);
  const auto file = read_cluster_file(state);
  if (!file.is_object()) {
    std::cout << "no local cluster in " << state.string() << "\n";
    std::exit(3);
  }
  const pid_t schedd = file.value("schedd", 0);
  std::cout << "schedd  pid " << schedd << (alive(schedd) ? "  running" : "  NOT RUNNING") << "  "
            << file.value("client_endpoint", "") << "\n";
  int running = 0;
  for (const auto& [name, pid] : file["agents"].items()) {
    const bool ok = alive(pid.get<pid_t>());
    running += ok;
    std::cout << name << "  pid " << pid.get<pid_t>() << (ok ? "  running" : "  NOT RUNNING")
              << "\n";
  }
  if (!alive(schedd) || running != static_cast<int>(file["agents"].size())) std::exit(1);
}

}  // namespace

std::optional<std::string> local_cluster_munge_socket(const std::string& endpoint) {
  const auto file = read_cluster_file(default_state_dir());
  if (!file.is_object() || !alive(file.value("schedd", 0))) return std::nullopt;
  if (file.value("client_endpoint", "") != endpoint) return std::nullopt;
  const std::string socket = file.value("munge_socket", "");
  if (socket.empty()) return std::nullopt;
  return socket;
}

std::optional<std::string> local_cluster_endpoint() {
  const auto file = read_cluster_file(default_state_dir());
  if (!file.is_object() || !alive(file.value("schedd", 0))) return std::nullopt;
  return file.value("client_endpoint", "");
}

void add_cluster_command(CLI::App& app) {
  CLI::App* cluster = app.add_subcommand("cluster", "A local cluster on this machine");
  cluster->require_subcommand(1);

  auto args = std::make_shared<UpArgs>();
  CLI::App* up_cmd =
      cluster->add_subcommand("up", "Start schedd and N node agents (virtual nodes)");
  up_cmd->add_option("-n,--nodes", args->nodes, "How many nodes")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  up_cmd->add_option("--cores", args->cores, "Cores per virtual node")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  up_cmd->add_option("--policy", args->policy, "Policy name or file")->capture_default_str();
  up_cmd->add_option("--config", args->config, "A schedd config file (its policy wins)")
      ->check(CLI::ExistingFile);
  up_cmd
      ->add_option("--port", args->port,
                   "Client port; agents, events and the web view (HTTP) use the next three")
      ->check(CLI::Range(1024, 65533))
      ->capture_default_str();
  up_cmd->add_option("--state-dir", args->state_dir, "Journal, logs and cluster.json");
  up_cmd->callback([args] { run_command([&] { up(*args); }); });

  auto state = std::make_shared<std::string>();
  CLI::App* down_cmd = cluster->add_subcommand("down", "Stop the local cluster");
  down_cmd->add_option("--state-dir", *state, "As given to `cluster up`");
  down_cmd->callback([state] { run_command([&] { down(*state); }); });
  CLI::App* status_cmd = cluster->add_subcommand("status", "Is the local cluster running?");
  status_cmd->add_option("--state-dir", *state, "As given to `cluster up`");
  status_cmd->callback([state] { run_command([&] { status(*state); }); });
}

}  // namespace sched::cli
