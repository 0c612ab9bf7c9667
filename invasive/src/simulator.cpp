#include "sched/invasive/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>

namespace sched::invasive {
namespace {

// splitmix64: the same numbers on every machine and library.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In (0, 1].
  double unit() { return (static_cast<double>(next() >> 11) + 1) * 0x1.0p-53; }
};

struct Event {
  double time;
  std::uint64_t order;
  enum class Kind { End, Arrival } kind;  // ends first: their cores are free for arrivals
  std::int64_t job;
  std::uint64_t generation;
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return order > o.order;
  }
};

}  // namespace

std::vector<WorkloadJob> generate_workload(int count, std::uint64_t seed, double mean_gap_s,
                                           int max_cores, double max_runtime_s, int urgent_every) {
  Rng rng{seed};
  std::vector<WorkloadJob> jobs;
  double t = 0;
  for (int i = 0; i < count; ++i) {
    WorkloadJob j;
    j.id = i + 1;
    j.submit = std::round(t);
    j.cores = 1 + static_cast<int>(rng.unit() * max_cores - 1e-9);
    j.runtime = std::round(60 + rng.unit() * (max_runtime_s - 60));
    j.urgent = urgent_every > 0 && (i + 1) % urgent_every == 0;
    jobs.push_back(j);
    t += -mean_gap_s * std::log(rng.unit());
  }
  return jobs;
}

double SimResult::mean_rounds() const {
  if (hypervisor.rounds.empty()) return 0;
  double sum = 0;
  for (int r : hypervisor.rounds) sum += r;
  return sum / static_cast<double>(hypervisor.rounds.size());
}

int SimResult::max_rounds() const {
  int m = 0;
  for (int r : hypervisor.rounds) m = std::max(m, r);
  return m;
}

SimResult simulate(const std::vector<WorkloadJob>& workload, const SimConfig& config) {
  Partition partition(config.topology);
  std::unique_ptr<HypervisorPolicy> hpolicy;
  if (!config.hypervisor_policy.empty()) {
    hpolicy = std::make_unique<HypervisorPolicy>(config.hypervisor_policy);
    if (!hpolicy->host().loaded()) throw std::runtime_error(*hpolicy->host().last_error());
  }
  SchedulerPolicy spolicy(config.scheduler_policy);
  if (!spolicy.host().loaded()) throw std::runtime_error(*spolicy.host().last_error());

  negotiation::HypervisorLimits limits;
  limits.max_attempts = std::max(limits.max_attempts, config.params.max_attempts);
  limits.min_status_interval_s = 1;
  HypervisorComponent h(partition, hpolicy.get(), limits);
  SchedulerComponent s(spolicy, config.params, "simulator");

  SimResult result;
  std::map<std::int64_t, std::size_t> index;
  for (const auto& j : workload) {
    index[j.id] = result.jobs.size();
    result.jobs.push_back({j.id, j.cores, j.submit, -1, -1, 0, j.urgent, false});
  }
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t order = 0;
  for (const auto& j : workload) {
    events.push({j.submit, order++, Event::Kind::Arrival, j.id, 0});
  }
  std::map<std::int64_t, double> remaining;  // of a running or suspended job
  std::map<std::int64_t, double> end_at;
  std::map<std::int64_t, std::uint64_t> generation;
  for (const auto& j : workload) remaining[j.id] = j.runtime;

  auto pump = [&](double t) {
    for (;;) {
      auto to_h = s.take_outgoing();
      auto to_s = h.take_outgoing();
      if (to_h.empty() && to_s.empty()) break;
      for (const auto& m : to_h) {
        result.messages.add(m);
        h.receive(m, t);
      }
      for (const auto& m : to_s) {
        result.messages.add(m);
        s.receive(m, t);
      }
    }
    for (const JobEvent& e : h.take_job_events()) {
      JobOutcome& out = result.jobs[index.at(e.job)];
      switch (e.kind) {
        case JobEvent::Kind::Started:
          out.start = t;
          out.extra_sockets = extra_sockets(e.placement, config.topology.cores_per_socket);
          [[fallthrough]];
        case JobEvent::Kind::Resumed:
          end_at[e.job] = t + remaining[e.job];
          events.push({end_at[e.job], order++, Event::Kind::End, e.job, ++generation[e.job]});
          break;
        case JobEvent::Kind::Suspended:
          out.suspended = true;
          remaining[e.job] = end_at[e.job] - t;
          ++generation[e.job];  // its end event is void
          break;
      }
    }
  };

  s.start(0);
  pump(0);
  while (!events.empty()) {
    const double t = events.top().time;
    bool ended = false;
    while (!events.empty() && events.top().time == t) {
      Event e = events.top();
      events.pop();
      const WorkloadJob& job = workload[index.at(e.job)];
      if (e.kind == Event::Kind::Arrival) {
        PendingJob p{job.id, job.cores, job.submit};
        if (job.urgent) {
          s.urgent(p, t);
        } else {
          s.submit(p, t);
        }
      } else if (e.generation == generation[e.job]) {
        result.jobs[index.at(e.job)].end = t;
        h.job_ended(e.job, t);
        ended = true;
      }
    }
    pump(t);
    if (ended) h.changed(t);  // once the instant's ends are in
    h.tick(t);
    s.tick(t);
    pump(t);
  }

  double first = 0, last = 0, used = 0, wait = 0, extra = 0;
  int started = 0, split = 0;
  bool any = false;
  for (const auto& j : result.jobs) {
    if (j.end < 0) {
      ++result.unfinished;
      continue;
    }
    first = any ? std::min(first, j.submit) : j.submit;
    last = any ? std::max(last, j.end) : j.end;
    any = true;
    used += j.cores * workload[index.at(j.id)].runtime;
    wait += j.start - j.submit;
    extra += j.extra_sockets;
    split += j.extra_sockets > 0;
    ++started;
  }
  result.makespan_s = last - first;
  if (started > 0) {
    result.mean_wait_s = wait / started;
    result.split_fraction = static_cast<double>(split) / started;
    result.mean_extra_sockets = extra / started;
  }
  if (result.makespan_s > 0) {
    result.utilisation = used / (config.topology.cores_total() * result.makespan_s);
  }
  result.hypervisor = h.stats();
  result.scheduler = s.stats();
  return result;
}

}  // namespace sched::invasive
