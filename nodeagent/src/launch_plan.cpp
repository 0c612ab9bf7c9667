#include "launch_plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

#include "unique_fd.hpp"

namespace sched::agent::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

std::string sys_error(int error) { return std::strerror(error); }

// Returns it absolute: paths found here must hold after the child's chdir.
std::string checked_workdir(const std::string& workdir) {
  if (workdir.empty()) throw LaunchError("no working directory given");
  std::error_code ec;
  if (!fs::is_directory(workdir, ec)) {
    throw LaunchError("working directory '" + workdir + "' does not exist or is not a directory");
  }
  return fs::absolute(workdir, ec).string();
}

// Relative paths name what the child sees after chdir(workdir).
fs::path from_workdir(const std::string& workdir, const std::string& path) {
  const fs::path p(path);
  return p.is_absolute() ? p : fs::path(workdir) / p;
}

bool executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// The job's variables over the inherited ones; each name once, sorted.
std::vector<std::string> make_envp(const EnvPairs& inherited, const EnvPairs& job) {
  std::map<std::string, std::string> merged(inherited.begin(), inherited.end());
  for (const auto& [name, value] : job) {
    if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos ||
        value.find('\0') != std::string::npos) {
      throw LaunchError("invalid environment variable name or value: '" + name + "'");
    }
    merged[name] = value;
  }
  std::vector<std::string> envp;
  envp.reserve(merged.size());
  for (const auto& [name, value] : merged) envp.push_back(name + "=" + value);
  return envp;
}

std::string env_value(const EnvPairs& inherited, const EnvPairs& job, std::string_view name) {
  for (auto it = job.rbegin(); it != job.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  for (const auto& [n, v] : inherited) {
    if (n == name) return v;
  }
  return "";
}

// As execvp would search, done here because execvp is not async-signal-safe;
// an empty PATH entry means the working directory.
std::string resolve_command(const std::string& name, const std::string& path_var,
                            const std::string& workdir) {
  if (name.empty()) throw LaunchError("empty command name");
  if (name.find('/') != std::string::npos) {
    if (!executable_file(from_workdir(workdir, name))) {
      throw LaunchError("command '" + name + "' does not exist or is not executable");
    }
    return name;
  }
  std::string_view rest = path_var;
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const fs::path candidate = from_workdir(workdir, dir.empty() ? "." : dir) / name;
    if (executable_file(candidate)) return candidate.string();
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  throw LaunchError("command '" + name + "' not found in PATH (" + path_var + ")");
}

// Splits a "#!interpreter [argument]" first line the way Linux does: the
// rest of the line after the interpreter is one argument. A trailing CR (a
// script saved on Windows) is dropped rather than becoming part of a name.
std::vector<std::string> shebang(std::string_view script) {
  if (!script.starts_with("#!")) return {};
  std::string_view line = script.substr(2, script.find('\n') - 2);
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!line.empty() && blank(line.front())) line.remove_prefix(1);
  while (!line.empty() && blank(line.back())) line.remove_suffix(1);
  std::size_t split = 0;
  while (split < line.size() && !blank(line[split])) ++split;
  std::vector<std::string> out{std::string(line.substr(0, split))};
  std::string_view arg = line.substr(split);
  while (!arg.empty() && blank(arg.front())) arg.remove_prefix(1);
  if (!arg.empty()) out.emplace_back(arg);
  return out;
}

// The ids a child takes, when the agent is root; a non-root agent can run
// only itself.
void plan_identity(const TaskIdentity& who, SpawnSpec& spec) {
  spec.cgroup_procs = who.cgroup_procs;
  if (!who.user) return;
  if (::geteuid() != 0) {
    if (who.user->uid != ::geteuid()) {
      throw LaunchError("the agent runs unprivileged (uid " + std::to_string(::geteuid()) +
                        ") and cannot run a task as '" + who.user->name + "'");
    }
    return;
  }
  spec.ids = SpawnSpec::Ids{who.user->uid, who.user->gid, who.user->groups};
}

// The job's variables over the base (the agent's, or the user's login
// environment); the user's identity is not the job's to choose.
std::vector<std::string> task_envp(const TaskIdentity& who, const EnvPairs& inherited,
                                   const EnvPairs& job) {
  if (!who.user) return make_envp(inherited, job);
  const EnvPairs login = login_environment(*who.user);
  EnvPairs env = job;
  for (const auto& [name, value] : login) {
    // SHELL too: the user database's, whatever the submitting shell was
    // (docs/user-guide.md, --export).
    if (name == "USER" || name == "LOGNAME" || name == "HOME" || name == "SHELL") {
      env.emplace_back(name, value);
    }
  }
  return make_envp(login, env);
}

void write_file(const fs::path& path, std::string_view text,
                const std::optional<UserIdentity>& user) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0700));
  if (!fd) throw LaunchError("cannot write script '" + path.string() + "': " + sys_error(errno));
  while (!text.empty()) {
    const ssize_t n = ::write(fd.get(), text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw LaunchError("cannot write script '" + path.string() + "': " + sys_error(errno));
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  // An existing file keeps its old mode through O_CREAT, and umask trims it.
  if (::fchmod(fd.get(), 0700) < 0) {
    throw LaunchError("cannot chmod script '" + path.string() + "': " + sys_error(errno));
  }
  // The job's user reads it (the interpreter opens it after the switch).
  if (user && ::geteuid() == 0 && ::fchown(fd.get(), user->uid, user->gid) < 0) {
    throw LaunchError("cannot give script '" + path.string() + "' to '" + user->name +
                      "': " + sys_error(errno));
  }
}

fs::path spool_script(const BatchLaunch& launch) {
  if (launch.spool_dir.empty()) throw LaunchError("no spool directory given");
  std::error_code ec;
  const fs::path dir = fs::absolute(launch.spool_dir, ec);
  if (!fs::is_directory(dir, ec)) {
    if (!fs::create_directories(dir, ec)) {
      throw LaunchError("cannot create spool directory '" + launch.spool_dir +
                        "': " + ec.message());
    }
    // Scripts can hold secrets: a spool the agent creates is its own, or
    // the job user's.
    fs::permissions(dir, fs::perms::owner_all, ec);
    if (launch.user && ::geteuid() == 0 &&
        ::chown(dir.c_str(), launch.user->uid, launch.user->gid) < 0) {
      throw LaunchError("cannot give spool directory '" + dir.string() + "' to '" +
                        launch.user->name + "': " + sys_error(errno));
    }
  }
  fs::path path = dir / ("job-" + std::to_string(launch.job) + ".sh");
  write_file(path, launch.script, launch.user);
  return path;
}

}  // namespace

EnvPairs inherited_environment() {
  EnvPairs env;
  // SCHED_MUNGE_SOCKET: the munged a cluster of its own runs (docs/security.md
  // §2), for the `sched` commands of jobs.
  for (const char* name : {"PATH", "HOME", "USER", "LANG", "SHELL", "SCHED_MUNGE_SOCKET"}) {
    if (const char* value = std::getenv(name)) env.emplace_back(name, value);
  }
  if (std::getenv("PATH") == nullptr) env.emplace_back("PATH", kDefaultPath);
  return env;
}

SpawnSpec plan_batch(const BatchLaunch& launch, const EnvPairs& inherited,
                     std::string* script_path) {
  const std::string workdir = checked_workdir(launch.workdir);
  if (launch.output_path.empty()) throw LaunchError("no output file given");
  const fs::path output_dir = from_workdir(workdir, launch.output_path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) {
    throw LaunchError("directory of output file '" + launch.output_path + "' does not exist");
  }
  if (!launch.error_path.empty()) {
    const fs::path error_dir = from_workdir(workdir, launch.error_path).parent_path();
    if (!fs::is_directory(error_dir, ec)) {
      throw LaunchError("directory of error file '" + launch.error_path + "' does not exist");
    }
  }

  SpawnSpec spec;
  plan_identity(launch, spec);
  spec.envp = task_envp(launch, inherited, launch.env);
  spec.workdir = workdir;
  spec.output_path = launch.output_path;
  spec.error_path = launch.error_path;
  std::vector<std::string> interpreter = shebang(launch.script);
  if (!interpreter.empty()) {
    if (interpreter[0].empty()) throw LaunchError("the script's #! line names no interpreter");
    if (!executable_file(from_workdir(workdir, interpreter[0]))) {
      throw LaunchError("the script's interpreter '" + interpreter[0] +
                        "' does not exist or is not executable");
    }
  } else {
    interpreter = {"/bin/sh"};
  }
  const fs::path script = spool_script(launch);
  *script_path = script.string();
  spec.exec_path = interpreter[0];
  spec.argv = std::move(interpreter);
  spec.argv.push_back(script.string());
  spec.argv.insert(spec.argv.end(), launch.args.begin(), launch.args.end());
  spec.cpus = launch.cpus;
  return spec;
}

SpawnSpec plan_step(const StepLaunch& launch, const EnvPairs& inherited) {
  const std::string workdir = checked_workdir(launch.workdir);
  if (launch.argv.empty()) throw LaunchError("no command given");
  SpawnSpec spec;
  plan_identity(launch, spec);
  spec.envp = task_envp(launch, inherited, launch.env);
  spec.workdir = workdir;
  const EnvPairs base = launch.user ? login_environment(*launch.user) : inherited;
  spec.exec_path = resolve_command(launch.argv[0], env_value(base, launch.env, "PATH"), workdir);
  spec.argv = launch.argv;
  spec.cpus = launch.cpus;
  return spec;
}

}  // namespace sched::agent::detail
