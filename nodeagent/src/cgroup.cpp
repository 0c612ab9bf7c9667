#include "sched/agent/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "unique_fd.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;
using detail::UniqueFd;

// Kill rounds are bounded: a process stuck in the kernel must not hang the agent.
constexpr auto kKillBound = std::chrono::seconds(5);

bool write_text(const fs::path& path, std::string_view text, int* error = nullptr) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
    return true;
  }
  if (error) *error = errno;
  return false;
}

void must_write(const fs::path& path, std::string_view text) {
  int error = 0;
  if (!write_text(path, text, &error)) {
    throw CgroupError("cannot write '" + std::string(text) + "' to " + path.string() + ": " +
                      std::strerror(error));
  }
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> read_number(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  try {
    return std::stoull(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "key value" lines (cpu.stat, memory.events, memory.oom_control).
std::optional<std::uint64_t> read_key(const fs::path& path, std::string_view key) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value) {
    if (name == key) return value;
  }
  return std::nullopt;
}

void make_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST) {
    throw CgroupError("cannot create cgroup " + dir.string() + ": " + std::strerror(errno));
  }
}

std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) out.push_back(entry.path());
  }
  return out;
}

// The processes of a cgroup and of its leaves.
std::set<pid_t> member_pids(const fs::path& job) {
  std::set<pid_t> pids;
  std::vector<fs::path> dirs = subdirs(job);
  dirs.push_back(job);
  for (const auto& dir : dirs) {
    std::ifstream in(dir / "cgroup.procs");
    pid_t pid = 0;
    while (in >> pid) pids.insert(pid);
  }
  return pids;
}

// rmdir of the leaves, then of the job's cgroup; an absent one is gone.
bool remove_tree(const fs::path& job) {
  std::error_code ec;
  if (!fs::exists(job, ec)) return true;
  bool ok = true;
  for (const auto& leaf : subdirs(job)) {
    if (::rmdir(leaf.c_str()) < 0 && errno != ENOENT) ok = false;
  }
  if (::rmdir(job.c_str()) < 0 && errno != ENOENT) ok = false;
  return ok;
}

void pause_briefly() {
  const timespec pause{0, 5'000'000};
  ::nanosleep(&pause, nullptr);
}

std::string job_dir_name(JobId job) { return "job_" + std::to_string(job); }

// "0,2,3": what cpuset.cpus takes.
std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

// A v1 cpuset cgroup starts with no CPUs and no memory nodes: nothing may
// join it until both are set. `cpus` empty: the parent's.
void fill_cpuset_v1(const fs::path& dir, const std::string& cpus) {
  const fs::path parent = dir.parent_path();
  auto trimmed = [](std::optional<std::string> text) {
    std::string t = text.value_or("");
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    return t;
  };
  must_write(dir / "cpuset.mems", trimmed(read_text(parent / "cpuset.mems")));
  must_write(dir / "cpuset.cpus", cpus.empty() ? trimmed(read_text(parent / "cpuset.cpus")) : cpus);
}

std::vector<JobId> stale_jobs(const fs::path& node_dir) {
  std::vector<JobId> jobs;
  for (const auto& dir : subdirs(node_dir)) {
    const std::string name = dir.filename().string();
    if (!name.starts_with("job_")) continue;
    try {
      jobs.push_back(std::stoll(name.substr(4)));
    } catch (const std::exception&) {
    }
  }
  return jobs;
}

// ------------------------------------------------------------- cgroup v2

class CgroupV2 final : public Cgroups {
 public:
  explicit CgroupV2(fs::path node_dir) : node_dir_(std::move(node_dir)) {}
  std::string_view kind() const override { return "cgroup2"; }

  std::vector<std::string> prepare(JobId job, const std::string& leaf,
                                   std::uint64_t mem_bytes) override {
    const fs::path dir = node_dir_ / job_dir_name(job);
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      make_dir(dir);
      // Leaves hold the processes (no internal processes in v2); the job's
      // cgroup holds the limit over all of them.
      write_text(dir / "cgroup.subtree_control", "+memory");
      write_text(dir / "cgroup.subtree_control", "+pids");
      if (cpuset_) write_text(dir / "cgroup.subtree_control", "+cpuset");
      if (mem_bytes > 0) {
        must_write(dir / "memory.max", std::to_string(mem_bytes));
        if (fs::exists(dir / "memory.swap.max", ec)) must_write(dir / "memory.swap.max", "0");
      }
    }
    make_dir(dir / leaf);
    return {(dir / leaf / "cgroup.procs").string()};
  }

  std::vector<std::string> confine_cpus(JobId job, const std::string&,
                                        const std::vector<int>& cpus) override {
    if (!cpuset_ || cpus.empty()) return {};
    // The job's cgroup holds the set; its leaves inherit it (v2's
    // effective cpus), and the processes are already in the leaf.
    must_write(node_dir_ / job_dir_name(job) / "cpuset.cpus", cpu_list(cpus));
    return {};
  }

  bool set_cpus(JobId job, const std::vector<int>& cpus) override {
    const fs::path file = node_dir_ / job_dir_name(job) / "cpuset.cpus";
    std::error_code ec;
    if (!cpuset_ || cpus.empty() || !fs::exists(file, ec)) return false;
    return write_text(file, cpu_list(cpus));
  }

  // Whether the unified hierarchy hands the cpuset controller down to us.
  void set_cpuset(bool on) { cpuset_ = on; }

  CgroupUsage usage(JobId job) const override {
    const fs::path dir = node_dir_ / job_dir_name(job);
    CgroupUsage usage;
    usage.max_rss_bytes = read_number(dir / "memory.peak");
    if (const auto usec = read_key(dir / "cpu.stat", "usage_usec")) usage.cpu_s = *usec / 1e6;
    usage.oom_killed = read_key(dir / "memory.events", "oom_kill").value_or(0) > 0;
    return usage;
  }

  bool kill_all(JobId job) override {
    const fs::path dir = node_dir_ / job_dir_name(job);
    const auto until = std::chrono::steady_clock::now() + kKillBound;
    while (true) {
      const auto pids = member_pids(dir);
      if (pids.empty()) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      // cgroup.kill (5.14+) reaches processes forked meanwhile too.
      if (!write_text(dir / "cgroup.kill", "1")) {
        for (pid_t pid : pids) ::kill(pid, SIGKILL);
      }
      pause_briefly();
    }
  }

  bool freeze(JobId job, bool frozen) override {
    return write_text(node_dir_ / job_dir_name(job) / "cgroup.freeze", frozen ? "1" : "0");
  }

  bool remove(JobId job) override { return remove_tree(node_dir_ / job_dir_name(job)); }

  std::vector<JobId> clean_stale() override {
    const auto jobs = stale_jobs(node_dir_);
    for (JobId job : jobs) {
      kill_all(job);
      remove(job);
    }
    return jobs;
  }

 private:
  fs::path node_dir_;
  bool cpuset_ = false;
};

// ------------------------------------------------------------- cgroup v1

class CgroupV1 final : public Cgroups {
 public:
  // controllers: their mount points; memory and freezer first.
  CgroupV1(fs::path root, std::string node, std::vector<std::string> controllers)
      : root_(std::move(root)), node_(std::move(node)), controllers_(std::move(controllers)) {}
  std::string_view kind() const override { return "cgroup1"; }

  std::vector<std::string> prepare(JobId job, const std::string& leaf,
                                   std::uint64_t mem_bytes) override {
    std::vector<std::string> procs;
    for (const auto& controller : controllers_) {
      const fs::path dir = job_dir(controller, job);
      std::error_code ec;
      if (!fs::exists(dir, ec)) {
        make_dir(dir);
        if (controller == "memory" && mem_bytes > 0) {
          must_write(dir / "memory.limit_in_bytes", std::to_string(mem_bytes));
          // memory + swap at the same bound: no swap beyond the limit.
          if (fs::exists(dir / "memory.memsw.limit_in_bytes", ec)) {
            must_write(dir / "memory.memsw.limit_in_bytes", std::to_string(mem_bytes));
          }
          write_text(dir / "memory.swappiness", "0");
        }
      }
      make_dir(dir / leaf);
      procs.push_back((dir / leaf / "cgroup.procs").string());
    }
    return procs;
  }

  std::vector<std::string> confine_cpus(JobId job, const std::string& leaf,
                                        const std::vector<int>& cpus) override {
    if (!cpuset_ || cpus.empty()) return {};
    const fs::path dir = job_dir("cpuset", job);
    std::error_code ec;
    if (!fs::exists(dir, ec)) make_dir(dir);
    fill_cpuset_v1(dir, cpu_list(cpus));
    make_dir(dir / leaf);
    fill_cpuset_v1(dir / leaf, {});
    return {(dir / leaf / "cgroup.procs").string()};
  }

  bool set_cpus(JobId job, const std::vector<int>& cpus) override {
    const fs::path dir = job_dir("cpuset", job);
    std::error_code ec;
    if (!cpuset_ || cpus.empty() || !fs::exists(dir / "cpuset.cpus", ec)) return false;
    const std::string list = cpu_list(cpus);
    // Widening, the parent must go first; narrowing, the kernel refuses it
    // while a leaf is wider: then it goes again after the leaves.
    const bool parent_first = write_text(dir / "cpuset.cpus", list);
    bool ok = true;
    for (const auto& leaf : subdirs(dir)) ok = write_text(leaf / "cpuset.cpus", list) && ok;
    return (parent_first || write_text(dir / "cpuset.cpus", list)) && ok;
  }

  // The cpuset hierarchy, when it is mounted and ours to write.
  void set_cpuset(bool on) { cpuset_ = on; }

  CgroupUsage usage(JobId job) const override {
    CgroupUsage usage;
    const fs::path memory = job_dir("memory", job);
    usage.max_rss_bytes = read_number(memory / "memory.max_usage_in_bytes");
    if (const auto ns = read_number(job_dir("cpuacct", job) / "cpuacct.usage")) {
      usage.cpu_s = *ns / 1e9;
    }
    // The limit is the job's: the kill is counted there, or (older
    // kernels) only the failures to charge are.
    std::uint64_t kills = read_key(memory / "memory.oom_control", "oom_kill").value_or(0);
    for (const auto& leaf : subdirs(memory)) {
      kills += read_key(leaf / "memory.oom_control", "oom_kill").value_or(0);
    }
    usage.oom_killed = kills > 0;
    return usage;
  }

  bool kill_all(JobId job) override {
    const fs::path freezer = job_dir("freezer", job);
    const fs::path memory = job_dir("memory", job);
    const auto until = std::chrono::steady_clock::now() + kKillBound;
    while (true) {
      std::set<pid_t> pids = member_pids(memory);
      for (pid_t pid : member_pids(freezer)) pids.insert(pid);
      if (pids.empty()) return true;
      if (std::chrono::steady_clock::now() > until) {
        write_text(freezer / "freezer.state", "THAWED");
        return false;
      }
      // Frozen, no process can fork away from the kill; SIGKILL reaches
      // frozen ones once they thaw.
      const bool frozen = write_text(freezer / "freezer.state", "FROZEN");
      for (int i = 0; frozen && i < 100; ++i) {
        const auto state = read_text(freezer / "freezer.state");
        if (!state || state->starts_with("FROZEN")) break;
        pause_briefly();
      }
      for (pid_t pid : pids) ::kill(pid, SIGKILL);
      write_text(freezer / "freezer.state", "THAWED");
      pause_briefly();
    }
  }

  bool freeze(JobId job, bool frozen) override {
    if (std::find(controllers_.begin(), controllers_.end(), "freezer") == controllers_.end()) {
      return false;
    }
    return write_text(job_dir("freezer", job) / "freezer.state", frozen ? "FROZEN" : "THAWED");
  }

  bool remove(JobId job) override {
    bool ok = true;
    for (const auto& controller : controllers_) ok = remove_tree(job_dir(controller, job)) && ok;
    if (cpuset_) ok = remove_tree(job_dir("cpuset", job)) && ok;
    return ok;
  }

  std::vector<JobId> clean_stale() override {
    std::set<JobId> jobs;
    for (const auto& controller : controllers_) {
      for (JobId job : stale_jobs(node_dir(controller))) jobs.insert(job);
    }
    if (cpuset_) {
      for (JobId job : stale_jobs(node_dir("cpuset"))) jobs.insert(job);
    }
    for (JobId job : jobs) {
      kill_all(job);
      remove(job);
    }
    return {jobs.begin(), jobs.end()};
  }

 private:
  fs::path node_dir(const std::string& controller) const {
    return root_ / controller / "sched" / node_;
  }
  fs::path job_dir(const std::string& controller, JobId job) const {
    return node_dir(controller) / job_dir_name(job);
  }

  fs::path root_;
  std::string node_;
  std::vector<std::string> controllers_;
  bool cpuset_ = false;
};

// ------------------------------------------------------------------ none

class NoCgroups final : public Cgroups {
 public:
  std::string_view kind() const override { return "none"; }
  std::vector<std::string> prepare(JobId, const std::string&, std::uint64_t) override { return {}; }
  std::vector<std::string> confine_cpus(JobId, const std::string&,
                                        const std::vector<int>&) override {
    return {};
  }
  bool set_cpus(JobId, const std::vector<int>&) override { return false; }
  CgroupUsage usage(JobId) const override { return {}; }
  bool kill_all(JobId) override { return true; }
  bool freeze(JobId, bool) override { return false; }
  bool remove(JobId) override { return true; }
  std::vector<JobId> clean_stale() override { return {}; }
};

// ------------------------------------------------------------- choosing

// The unified hierarchy: the mount itself (pure v2) or its unified/ part
// (hybrid). Usable when it offers memory and the agent can create its
// subtree and hand the memory controller down to it.
std::unique_ptr<Cgroups> try_v2(const CgroupOptions& o, std::string& why) {
  fs::path base = o.root;
  std::error_code ec;
  if (!fs::exists(base / "cgroup.controllers", ec)) base = base / "unified";
  const auto controllers = read_text(base / "cgroup.controllers");
  if (!controllers) {
    why = "no cgroup v2 hierarchy under " + o.root;
    return nullptr;
  }
  if (controllers->find("memory") == std::string::npos) {
    why = "the cgroup v2 hierarchy " + base.string() + " offers no memory controller";
    return nullptr;
  }
  try {
    const fs::path sched = base / "sched";
    const fs::path node = sched / o.node;
    // Each level hands memory (and pids) down to the next.
    for (const fs::path& dir : {base, sched}) {
      if (dir != base) make_dir(dir);
      must_write(dir / "cgroup.subtree_control", "+memory");
      write_text(dir / "cgroup.subtree_control", "+pids");
    }
    make_dir(node);
    must_write(node / "cgroup.subtree_control", "+memory");
    write_text(node / "cgroup.subtree_control", "+pids");
    auto cg = std::make_unique<CgroupV2>(node);
    // cpuset (issue 20 item 2) where offered: handed down level by level
    // like memory; a job then confines its own cgroup.
    if (controllers->find("cpuset") != std::string::npos) {
      bool on = true;
      for (const fs::path& dir : {base, sched, node}) {
        on = on && write_text(dir / "cgroup.subtree_control", "+cpuset");
      }
      cg->set_cpuset(on);
    }
    return cg;
  } catch (const CgroupError& e) {
    why = std::string("cgroup v2 is not writable: ") + e.what();
    return nullptr;
  }
}

std::unique_ptr<Cgroups> try_v1(const CgroupOptions& o, std::string& why) {
  const fs::path root = o.root;
  std::vector<std::string> controllers;
  for (const char* name : {"memory", "freezer", "cpuacct", "pids"}) {
    std::error_code ec;
    if (fs::exists(root / name / "cgroup.procs", ec)) {
      controllers.emplace_back(name);
    } else if (std::string_view(name) != "pids") {
      why = std::string("no cgroup v1 ") + name + " hierarchy under " + o.root;
      return nullptr;
    }
  }
  try {
    for (const auto& controller : controllers) {
      const fs::path sched = root / controller / "sched";
      make_dir(sched);
      make_dir(sched / o.node);
      if (controller == "memory") {
        // Limits hold over descendants (the default on new kernels; the
        // file refuses once children exist).
        write_text(sched / "memory.use_hierarchy", "1");
      }
    }
  } catch (const CgroupError& e) {
    why = std::string("cgroup v1 is not writable: ") + e.what();
    return nullptr;
  }
  auto cg = std::make_unique<CgroupV1>(root, o.node, controllers);
  // The cpuset hierarchy (issue 20 item 2), optional: sched/ and the node's
  // folder get all of the machine's CPUs and memory nodes, so that a job's
  // cpuset below may take some.
  std::error_code ec;
  if (fs::exists(root / "cpuset" / "cgroup.procs", ec)) {
    try {
      const fs::path sched = root / "cpuset" / "sched";
      for (const fs::path& dir : {sched, sched / o.node}) {
        make_dir(dir);
        fill_cpuset_v1(dir, {});
      }
      cg->set_cpuset(true);
    } catch (const CgroupError&) {
      // Not ours to write: jobs are pinned by affinity alone.
    }
  }
  return cg;
}

}  // namespace

std::unique_ptr<Cgroups> open_cgroups(const CgroupOptions& options, std::string* why) {
  if (options.node.empty() || options.node.find('/') != std::string::npos || options.node == "." ||
      options.node == "..") {
    throw CgroupError("node name '" + options.node + "' cannot name a cgroup");
  }
  std::string v2_why, v1_why;
  if (options.mode == "none") {
    if (why) *why = "containment none (configured)";
    return std::make_unique<NoCgroups>();
  }
  if (options.mode == "auto" || options.mode == "cgroup2") {
    if (auto cg = try_v2(options, v2_why)) {
      if (why) *why = "containment cgroup2";
      return cg;
    }
    if (options.mode == "cgroup2") throw CgroupError(v2_why);
  }
  if (options.mode == "auto" || options.mode == "cgroup1") {
    if (auto cg = try_v1(options, v1_why)) {
      if (why) *why = "containment cgroup1 (" + v2_why + ")";
      return cg;
    }
    if (options.mode == "cgroup1") throw CgroupError(v1_why);
  }
  if (options.mode != "auto") {
    throw CgroupError("unknown containment '" + options.mode +
                      "' (auto, cgroup2, cgroup1 or none)");
  }
  if (why) *why = "containment none (" + v2_why + "; " + v1_why + ")";
  return std::make_unique<NoCgroups>();
}

}  // namespace sched::agent
