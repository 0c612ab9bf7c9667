// The floor of bench/sim_speed: EASY backfilling over an SWF trace in plain
// C++, with nothing of sched in it. It reads the trace as sched's SwfOptions
// do (docs/simulator.md, "Rigid SWF replay"), replays it with the simulator's
// event order (completions and submissions of an instant, then one pass)
// and decides as scripts/policies/lib/easy.lua does, tie for tie, so its
// schedule equals `sched sim --policy easy_backfill` and the time it takes
// is what the same work costs without an engine, a Lua host or reports.
//
//   easy_floor TRACE.swf [--nodes N] [--cores-per-node C]
//
// Prints "id start" per job in id order (times as jobs.csv writes them).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Job {
  long long id = 0;
  double submit = 0;
  double runtime = 0;
  double walltime = 0;  // 0: none (a zero run time without an estimate)
  int nodes = 0;
  double start = -1;
};

struct Trace {
  std::vector<Job> jobs;  // by submit time, then id
  int nodes = 0;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "easy_floor: %s\n", what.c_str());
  std::exit(1);
}

std::string read_all(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) die(std::string("cannot open ") + path);
  std::string text;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

long long header_number(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return 0;
  auto rest = line.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  long long value = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), value);
  return value;
}

Trace read_trace(const char* path, int nodes_option, int cores_per_node) {
  const std::string text = read_all(path);
  long long max_procs = 0;
  long long max_nodes = 0;
  struct Record {
    Job job;
    double size;
  };
  std::vector<Record> records;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] == ';') {
      if (const long long v = header_number(line, "MaxProcs:"); v > 0) max_procs = v;
      if (const long long v = header_number(line, "MaxNodes:"); v > 0) max_nodes = v;
      continue;
    }
    double f[18] = {};
    const char* p = line.data() + first;
    const char* const stop = line.data() + line.size();
    for (double& field : f) {
      while (p < stop && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
      const auto [next, ec] = std::from_chars(p, stop, field);
      if (ec != std::errc()) die("bad record: " + std::string(line));
      p = next;
    }
    Record r;
    r.job.id = static_cast<long long>(f[0]);
    r.job.submit = f[1];
    r.job.runtime = f[3];
    r.size = f[7] > 0 ? f[7] : f[4];
    const double estimate = f[8] > 0 ? f[8] : f[3];
    r.job.walltime = std::max(estimate, f[3]);
    if (r.job.runtime < 0 || r.size <= 0) continue;
    r.job.nodes = static_cast<int>(std::ceil(r.size / cores_per_node));
    records.push_back(r);
  }
  Trace trace;
  const long long procs = max_procs > 0 ? max_procs : max_nodes;
  trace.nodes = nodes_option > 0 ? nodes_option : static_cast<int>(procs / cores_per_node);
  if (trace.nodes < 1) die("no cluster size: give --nodes");
  for (const Record& r : records) {
    if (r.job.nodes <= trace.nodes) trace.jobs.push_back(r.job);
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(), [](const Job& a, const Job& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  return trace;
}

// One EASY pass (lib/easy.lua): first come, first served while jobs fit;
// then the head's shadow time from the estimated ends; then backfill.
class Easy {
 public:
  Easy(std::vector<Job>& jobs, int nodes) : jobs_(jobs), idle_(nodes) {}

  void submit(std::size_t job) { pending_.push_back(job); }
  void complete(std::size_t job) {
    idle_ += jobs_[job].nodes;
    const std::size_t slot = slot_of_[job];
    running_[slot] = running_.back();
    slot_of_[running_[slot]] = slot;
    running_.pop_back();
  }
  // Starts what the pass starts; `started` receives them.
  void pass(double now, std::vector<std::size_t>& started) {
    started.clear();
    std::size_t i = 0;
    while (i < pending_.size() && jobs_[pending_[i]].nodes <= idle_) {
      start(pending_[i], now, started);
      ++i;
    }
    if (i < pending_.size()) backfill(now, i, started);
    // Keep the waiting jobs in order.
    std::size_t kept = 0;
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      if (jobs_[pending_[k]].start < 0) pending_[kept++] = pending_[k];
    }
    pending_.resize(kept);
  }

 private:
  static double est_end(const Job& job) {
    return job.walltime > 0 ? job.start + job.walltime : kNever;
  }

  void start(std::size_t job, double now, std::vector<std::size_t>& started) {
    jobs_[job].start = now;
    idle_ -= jobs_[job].nodes;
    if (slot_of_.size() < jobs_.size()) slot_of_.resize(jobs_.size());
    slot_of_[job] = running_.size();
    running_.push_back(job);
    started.push_back(job);
  }

  void backfill(double now, std::size_t head_at, std::vector<std::size_t>& started) {
    const Job& head = jobs_[pending_[head_at]];
    // Every job holding nodes (running before, or started in phase 1), by
    // estimated end; nodes free at equal ends count together.
    ends_.clear();
    for (const std::size_t r : running_) {
      ends_.emplace_back(std::max(est_end(jobs_[r]), now), jobs_[r].nodes);
    }
    std::sort(ends_.begin(), ends_.end());
    double shadow = kNever;
    int extra = 0;
    int free = idle_;
    for (std::size_t k = 0; k < ends_.size();) {
      const double t = ends_[k].first;
      while (k < ends_.size() && ends_[k].first == t) free += ends_[k++].second;
      if (free >= head.nodes) {
        shadow = t;
        extra = free - head.nodes;
        break;
      }
    }
    for (std::size_t k = head_at + 1; k < pending_.size() && idle_ > 0; ++k) {
      const Job& job = jobs_[pending_[k]];
      if (job.nodes > idle_) continue;
      if (job.walltime > 0 && now + job.walltime <= shadow) {
        start(pending_[k], now, started);
      } else if (job.nodes <= extra) {
        extra -= job.nodes;
        start(pending_[k], now, started);
      }
    }
  }

  std::vector<Job>& jobs_;
  int idle_;
  std::vector<std::size_t> pending_;  // in priority order
  std::vector<std::size_t> running_;
  std::vector<std::size_t> slot_of_;  // job → its place in running_
  std::vector<std::pair<double, int>> ends_;
};

std::string format_seconds(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", s);
  std::string text = buffer;
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  int nodes = 0;
  int cores_per_node = 1;
  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if (arg == "--nodes" && a + 1 < argc) {
      nodes = std::atoi(argv[++a]);
    } else if (arg == "--cores-per-node" && a + 1 < argc) {
      cores_per_node = std::max(1, std::atoi(argv[++a]));
    } else if (!path) {
      path = argv[a];
    } else {
      die("usage: easy_floor TRACE.swf [--nodes N] [--cores-per-node C]");
    }
  }
  if (!path) die("usage: easy_floor TRACE.swf [--nodes N] [--cores-per-node C]");
  Trace trace = read_trace(path, nodes, cores_per_node);
  std::vector<Job>& jobs = trace.jobs;
  Easy easy(jobs, trace.nodes);

  // Completions by time; a job with no run time ends at the instant it starts.
  using End = std::pair<double, std::size_t>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<std::size_t> started;
  std::size_t next = 0;
  while (next < jobs.size() || !ends.empty()) {
    const double now = std::min(next < jobs.size() ? jobs[next].submit : kNever,
                                ends.empty() ? kNever : ends.top().first);
    while (!ends.empty() && ends.top().first == now) {
      easy.complete(ends.top().second);
      ends.pop();
    }
    while (next < jobs.size() && jobs[next].submit == now) easy.submit(next++);
    easy.pass(now, started);
    for (const std::size_t j : started) ends.emplace(now + jobs[j].runtime, j);
  }

  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  std::string out;
  out.reserve(jobs.size() * 16);
  for (const Job& job : jobs) {
    out += std::to_string(job.id);
    out += ' ';
    out += job.start >= 0 ? format_seconds(job.start) : std::string();
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
