#include "config_check.hpp"

#include <filesystem>

#include "sched/plugins/loader.hpp"

namespace sched::agent {
namespace fs = std::filesystem;

std::vector<std::string> check_options(const AgentOptions& options, const std::string& source) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& key, const std::string& what) {
    problems.push_back(source + ": " + key + ": " + what);
  };
  std::error_code ec;
  if (options.engine_endpoint.rfind("tcp://", 0) != 0 &&
      options.engine_endpoint.rfind("ipc://", 0) != 0) {
    problem("engine",
            "expected tcp://HOST:PORT or ipc://PATH, got '" + options.engine_endpoint + "'");
  }
  // The CURVE link needs both keys (docs/security.md §3).
  for (const auto& [key, file] :
       {std::pair{"secret-key-file", options.secret_key_file},
        std::pair{"server-public-key-file", options.server_public_key_file}}) {
    if (file.empty()) {
      problem(key, "required (the link to schedd is CURVE)");
    } else if (!fs::is_regular_file(file, ec)) {
      problem(key, "no such file: " + file);
    }
  }
  // The spool is made at start: it or its parent must be there.
  if (!options.spool_dir.empty()) {
    const fs::path spool = fs::absolute(options.spool_dir);
    if (fs::exists(spool, ec) ? !fs::is_directory(spool, ec)
                              : !fs::is_directory(spool.parent_path(), ec)) {
      problem("spool-dir", options.spool_dir + " is neither a folder nor can be made in one");
    }
  }
  try {
    if (options.power_meter == "auto") {
      plugins::open_default_power_meter(plugins::default_plugin_dirs(), options.power_options,
                                        nullptr);
    } else {
      plugins::load_power_meter(options.power_meter, options.power_options,
                                plugins::default_plugin_dirs());
    }
  } catch (const std::exception& e) {
    problem("power-meter", e.what());
  }
  if (options.containment != "none" && options.containment != "auto" &&
      !fs::is_directory(options.cgroup_root, ec)) {
    problem("cgroup-root", "no such folder: " + options.cgroup_root);
  }
  return problems;
}

}  // namespace sched::agent
