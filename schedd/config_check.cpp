#include "config_check.hpp"

#include <filesystem>

#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"

namespace sched::daemon {
namespace fs = std::filesystem;

std::vector<std::string> check_config(const DaemonConfig& config, const std::string& source) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& key, const std::string& what) {
    problems.push_back(source + ": " + key + ": " + what);
  };
  std::error_code ec;

  if (!fs::is_directory(config.policy_dir, ec)) {
    problem("scheduler.policy_dir", "no such folder: " + config.policy_dir);
  }
  if (const auto path = resolve_policy_path(config.policy, config.policy_dir); !path) {
    problem("scheduler.policy",
            "no file " + config.policy + " nor " + config.policy + ".lua in " + config.policy_dir);
  } else {
    // Compiled and its top level run, as schedd's first load does.
    LuaPolicyOptions options;
    options.params = config.params;
    try {
      LuaPolicy::load(*path, options);
    } catch (const std::exception& e) {
      problem("scheduler.policy", *path + " does not load: " + e.what());
    }
  }

  // The state folder is made at start, with its missing parents: what of
  // its path exists must be a folder.
  fs::path existing = fs::absolute(config.state_dir);
  while (!fs::exists(existing, ec) && existing.has_relative_path()) {
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec)) {
    problem("server.state_dir",
            config.state_dir + " cannot be made: " + existing.string() + " is no folder");
  }
  // Key files at their default places are made on first start; configured
  // elsewhere they must exist.
  if (config.secret_key_file != default_secret_key_file(config) &&
      !fs::is_regular_file(config.secret_key_file, ec)) {
    problem("security.secret_key_file", "no such file: " + config.secret_key_file);
  }
  if (config.authorized_agents_file != default_authorized_agents_file(config) &&
      !fs::is_regular_file(config.authorized_agents_file, ec)) {
    problem("security.authorized_agents_file", "no such file: " + config.authorized_agents_file);
  }
  if (!config.log_file.empty() &&
      !fs::is_directory(fs::absolute(config.log_file).parent_path(), ec)) {
    problem("log.file", "no folder for " + config.log_file);
  }
  if (!config.munge_socket.empty() && !fs::exists(config.munge_socket, ec)) {
    problem("auth.socket", "no such socket: " + config.munge_socket);
  }
  for (const auto& [key, endpoint] : {std::pair{"server.client_endpoint", config.client_endpoint},
                                      std::pair{"server.agent_endpoint", config.agent_endpoint},
                                      std::pair{"server.event_endpoint", config.event_endpoint}}) {
    if (endpoint.rfind("tcp://", 0) != 0 && endpoint.rfind("ipc://", 0) != 0) {
      problem(key, "expected tcp://HOST:PORT or ipc://PATH, got '" + endpoint + "'");
    }
  }
  if (auto why = http_listen_problem(config.http_listen)) problem("http.listen", *why);
  return problems;
}

}  // namespace sched::daemon
