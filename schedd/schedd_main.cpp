// schedd: the scheduler daemon. `schedd [--config FILE] [--state-dir DIR]`;
// with no config it runs on built-in defaults (loopback endpoints).
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

#include "config_check.hpp"
#include "daemon_config.hpp"
#include "sched/daemon_log.hpp"
#include "schedd.hpp"

namespace {

std::atomic<bool> stop_requested{false};
std::atomic<bool> reload_requested{false};

void on_signal(int) { stop_requested.store(true); }
void on_hangup(int) { reload_requested.store(true); }

}  // namespace

int main(int argc, char** argv) {
  // Keep 64 MiB of freed heap rather than hand it back at once: a listing
  // page builds and frees megabytes, and faulting them in again each page
  // cost more than building them (bench/queue).
  mallopt(M_TOP_PAD, 64 << 20);
  CLI::App app{"schedd: the sched scheduler daemon"};
  std::string config_path;
  std::string state_dir;
  std::string policy;
  std::string log_level, log_file;
  std::string client_endpoint, agent_endpoint, event_endpoint;
  std::optional<std::string> http_listen;
  std::string munge_socket;
  std::string secret_key_file, authorized_agents_file;
  bool allow_root_jobs = false;
  bool check_only = false;
  app.add_option("-c,--config", config_path, "Configuration file (TOML); default: built-in")
      ->check(CLI::ExistingFile);
  app.add_option("--state-dir", state_dir, "Where the journal lives (overrides the config)");
  app.add_option("--policy", policy,
                 "Policy name or file of the first start (overrides scheduler.policy; later "
                 "starts run the last deployed version: sched policy set)");
  app.add_option("--client-endpoint", client_endpoint, "Overrides server.client_endpoint");
  app.add_option("--agent-endpoint", agent_endpoint, "Overrides server.agent_endpoint");
  app.add_option("--event-endpoint", event_endpoint, "Overrides server.event_endpoint");
  app.add_option("--http-listen", http_listen,
                 "Overrides http.listen: HOST:PORT of the metrics endpoint and web view (port 0: "
                 "any free one; \"\": none)");
  app.add_option("--munge-socket", munge_socket, "Overrides auth.socket (munged's socket)");
  app.add_option("--secret-key-file", secret_key_file, "Overrides security.secret_key_file");
  app.add_option("--authorized-agents-file", authorized_agents_file,
                 "Overrides security.authorized_agents_file");
  app.add_flag("--allow-root-jobs", allow_root_jobs,
               "Sets jobs.allow_root_jobs (the local cluster's)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error (overrides log.level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_option("--log-file", log_file,
                 "Log to this file, appended (overrides log.file; default: stderr, which "
                 "systemd sends to the journal)");
  app.add_flag("--check-config", check_only,
               "Check the config (with the options above) and exit: 0 when usable, 1 with "
               "what is wrong, by file and key; nothing is started");
  app.set_version_flag("--version", std::string("schedd 0.1.0"));
  CLI11_PARSE(app, argc, argv);

  // Logs go to stderr until the config says otherwise; stdout carries only
  // the endpoints.
  sched::layout::setup_daemon_log("schedd", {});
  // The config file with the command line over it: at start and on SIGHUP.
  auto read_config = [&] {
    sched::daemon::DaemonConfig config = config_path.empty()
                                             ? sched::daemon::DaemonConfig{}
                                             : sched::daemon::load_config(config_path);
    if (!state_dir.empty()) config.state_dir = state_dir;
    if (!policy.empty()) config.policy = policy;
    if (!client_endpoint.empty()) config.client_endpoint = client_endpoint;
    if (!agent_endpoint.empty()) config.agent_endpoint = agent_endpoint;
    if (!event_endpoint.empty()) config.event_endpoint = event_endpoint;
    if (http_listen) config.http_listen = *http_listen;
    if (!munge_socket.empty()) config.munge_socket = munge_socket;
    if (!secret_key_file.empty()) config.secret_key_file = secret_key_file;
    if (!authorized_agents_file.empty()) config.authorized_agents_file = authorized_agents_file;
    if (allow_root_jobs) config.allow_root_jobs = true;
    if (!log_level.empty()) config.log_level = log_level;
    if (!log_file.empty()) config.log_file = log_file;
    sched::daemon::complete_config(config);
    return config;
  };
  try {
    sched::daemon::DaemonConfig config = read_config();
    if (check_only) {
      const std::string source = config_path.empty() ? "built-in defaults" : config_path;
      const auto problems = sched::daemon::check_config(config, source);
      for (const std::string& problem : problems) std::cerr << problem << "\n";
      if (problems.empty()) std::cout << source << ": ok\n";
      return problems.empty() ? 0 : 1;
    }

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGPIPE, SIG_IGN);
    sched::layout::setup_daemon_log("schedd", {config.log_level, config.log_file});
    std::signal(SIGHUP, on_hangup);  // reads the authorised agent keys and the config again
    sched::daemon::Daemon daemon(std::move(config));
    daemon.set_config_source([&] {
      sched::daemon::DaemonConfig fresh = read_config();
      sched::layout::setup_daemon_log("schedd", {fresh.log_level, fresh.log_file});
      return fresh;
    });
    // Tools that start schedd on port 0 read the endpoints from here.
    std::cout << "clients " << daemon.client_endpoint() << "\nagents " << daemon.agent_endpoint()
              << "\nevents " << daemon.event_endpoint() << std::endl;
    // The URL of the metrics and the web view, when served (`sched cluster up`).
    if (!daemon.http_url().empty()) std::cout << "http " << daemon.http_url() << std::endl;
    daemon.run(stop_requested, &reload_requested);
    spdlog::info("stopping");
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
