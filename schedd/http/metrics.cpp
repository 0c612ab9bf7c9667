#include "metrics.hpp"

#include <algorithm>
#include <cctype>

#include "event_wire.hpp"
#include "sched/decision.hpp"

namespace sched::daemon::http {
namespace {

// Passes take from tens of microseconds (a few jobs) to the policy's time
// limit (0.5 s by default).
const std::vector<double> kPassBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                          0.025,  0.05,    0.1,    0.25,  0.5,    1};
// An adaptation waits for every agent of the job: tens of milliseconds to
// the adaptation timeout (20 s by default).
const std::vector<double> kAdaptationBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                1,    2.5,   5,    10,  20,   60};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string node_state(const Node& node) {
  if (!node.up) return "down";
  if (node.draining) return node.job != 0 ? "draining" : "drained";
  return node.job != 0 ? "allocated" : "idle";
}

}  // namespace

Metrics::Metrics() : pass_duration_(kPassBuckets) {
  for (const char* kind : {"expand", "shrink"}) {
    adaptation_duration_.emplace(kind, Histogram(kAdaptationBuckets));
  }
}

void Metrics::on_event(const Event& event, const std::string& partition) {
  switch (event.type) {
    case EventType::SchedPass:
      pass_duration_.observe(event.pass_s);
      break;
    case EventType::JobAdapting:
      // The event has the size before; the engine's message names the kind
      // and the target ("expand 1 -> 3").
      adapting_[event.job] = {event.message.rfind("shrink", 0) == 0 ? "shrink" : "expand",
                              event.time};
      break;
    case EventType::JobResized: {
      const auto it = adapting_.find(event.job);
      if (it == adapting_.end()) break;
      // The engine says "adaptation rolled back" when the resize did not happen.
      const std::string result = event.message.empty() ? "ok" : "rolled_back";
      ++adaptations_[{it->second.kind, result}];
      adaptation_duration_.at(it->second.kind)
          .observe(std::max(0.0, event.time - it->second.since));
      adapting_.erase(it);
      break;
    }
    case EventType::JobCompleted:
    case EventType::JobFailed:
    case EventType::JobCancelled:
    case EventType::JobTimeout: {
      ++ended_[{lower(to_string(event.to)), partition}];
      // A job that ended in the middle of its adaptation: the adaptation failed.
      if (const auto it = adapting_.find(event.job); it != adapting_.end()) {
        ++adaptations_[{it->second.kind, "failed"}];
        adaptation_duration_.at(it->second.kind)
            .observe(std::max(0.0, event.time - it->second.since));
        adapting_.erase(it);
      }
      break;
    }
    default:
      break;
  }
}

std::string Metrics::render(const Engine& engine, const DaemonFigures& daemon) const {
  const PassStats& stats = engine.stats();
  PromWriter w;

  // Jobs by partition and state: pending is the queue `sched stats` counts
  // (held and waiting jobs included); the others are its running jobs by
  // state. Without partitions every job is "default" and the queue is not
  // walked.
  std::vector<std::string> partitions;
  if (engine.partitioned()) {
    for (const Partition& p : engine.partitions()) partitions.push_back(p.spec.name);
  } else {
    partitions.push_back(kDefaultPartition);
  }
  const auto label_of = [&](const Job& job) -> const std::string& {
    const auto index = static_cast<std::size_t>(job.partition);
    return engine.partitioned() && index < partitions.size() ? partitions[index] : partitions[0];
  };
  std::map<std::pair<std::string, std::string>, std::uint64_t> jobs;  // (partition, state)
  for (const std::string& p : partitions) {
    for (const char* state : {"pending", "starting", "running", "adapting", "completing"}) {
      jobs[{p, state}] = 0;
    }
  }
  if (engine.partitioned()) {
    auto listing = engine.pending_queue().listing();
    while (const Job* job = listing.next()) ++jobs[{label_of(*job), "pending"}];
  } else {
    jobs[{partitions[0], "pending"}] = engine.pending_queue().listing_size();
  }
  for (const Job* job : engine.running_jobs()) {
    ++jobs[{label_of(*job), lower(to_string(job->state))}];
  }
  w.family("sched_jobs", MetricType::Gauge,
           "Jobs not yet ended, by state and partition (pending includes held and waiting jobs)");
  for (const auto& [key, n] : jobs) {
    w.sample({{"state", key.second}, {"partition", key.first}}, static_cast<double>(n));
  }
  w.family("sched_queue_length", MetricType::Gauge, "Pending jobs, as sched stats counts them");
  for (const std::string& p : partitions) {
    w.sample({{"partition", p}}, static_cast<double>(jobs[{p, "pending"}]));
  }
  w.family("sched_jobs_ended_total", MetricType::Counter,
           "Jobs that ended since schedd started, by end state and partition");
  for (const std::string& p : partitions) {
    for (const char* state : {"completed", "failed", "cancelled", "timeout"}) {
      const auto it = ended_.find({state, p});
      w.sample({{"state", state}, {"partition", p}},
               it == ended_.end() ? 0 : static_cast<double>(it->second));
    }
  }
  w.family("sched_jobs_submitted_total", MetricType::Counter,
           "Jobs submitted (kept across restarts in the journal); rate() gives submissions per "
           "second");
  w.sample({}, static_cast<double>(daemon.submitted));

  w.family("sched_passes_total", MetricType::Counter, "Scheduling passes run");
  w.sample({}, static_cast<double>(stats.passes));
  w.family("sched_passes_failed_total", MetricType::Counter,
           "Scheduling passes whose policy failed (their actions dropped)");
  w.sample({}, static_cast<double>(stats.failed));
  w.family("sched_actions_total", MetricType::Counter, "Policy actions accepted and enacted");
  w.sample({}, static_cast<double>(stats.actions));
  w.family("sched_pass_duration_seconds", MetricType::Histogram,
           "Wall-clock duration of each scheduling pass since schedd started");
  w.histogram({}, pass_duration_);
  w.family("sched_refusals_total", MetricType::Counter,
           "Policy actions the engine refused, by refusal code");
  for (int code = 0; code < kRefusalCodeCount; ++code) {
    w.sample({{"code", std::string(to_string(static_cast<RefusalCode>(code)))}},
             static_cast<double>(stats.refusals_by_code[static_cast<std::size_t>(code)]));
  }

  w.family("sched_adaptations_total", MetricType::Counter,
           "Live adaptations that ended since schedd started, by kind and result (ok, "
           "rolled_back, failed)");
  for (const char* kind : {"expand", "shrink"}) {
    for (const char* result : {"ok", "rolled_back", "failed"}) {
      const auto it = adaptations_.find({kind, result});
      w.sample({{"kind", kind}, {"result", result}},
               it == adaptations_.end() ? 0 : static_cast<double>(it->second));
    }
  }
  if (!nego_.empty()) {  // issue 20: only where a partition is negotiated
    w.family("sched_negotiation_events_total", MetricType::Counter,
             "nego.* events since schedd started, by partition and topic");
    for (const auto& [key, n] : nego_) {
      w.sample({{"partition", key.first}, {"topic", key.second}}, static_cast<double>(n));
    }
  }
  w.family("sched_adaptations_in_progress", MetricType::Gauge, "Jobs adapting now");
  w.sample({}, static_cast<double>(adapting_.size()));
  w.family("sched_adaptation_duration_seconds", MetricType::Histogram,
           "From job.adapting to the adaptation's end, by kind");
  for (const auto& [kind, histogram] : adaptation_duration_)
    w.histogram({{"kind", kind}}, histogram);

  std::map<std::string, std::uint64_t> nodes = {
      {"idle", 0}, {"allocated", 0}, {"draining", 0}, {"drained", 0}, {"down", 0}};
  for (const Node& node : engine.cluster().nodes()) ++nodes[node_state(node)];
  w.family("sched_nodes", MetricType::Gauge,
           "Nodes by state: idle, allocated, draining (drain asked, still busy), drained, down");
  for (const auto& [state, n] : nodes) w.sample({{"state", state}}, static_cast<double>(n));

  const PowerView power = engine.power();
  w.family("sched_power_watts", MetricType::Gauge,
           "The cluster's power draw as the engine models it");
  w.sample({}, power.current_w);
  // 0/0 means no corridor: the bounds are then left out, not written as 0.
  if (power.upper_w > 0) {
    w.family("sched_power_corridor_lower_watts", MetricType::Gauge,
             "The power corridor's lower bound");
    w.sample({}, power.lower_w);
    w.family("sched_power_corridor_upper_watts", MetricType::Gauge,
             "The power corridor's upper bound");
    w.sample({}, power.upper_w);
  }

  w.family("sched_uptime_seconds", MetricType::Gauge, "Seconds since schedd started");
  w.sample({}, daemon.uptime_s);
  w.family("sched_messages_total", MetricType::Counter, "Messages received (clients and agents)");
  w.sample({}, static_cast<double>(daemon.messages));
  w.family("sched_bad_messages_total", MetricType::Counter, "Messages refused as malformed");
  w.sample({}, static_cast<double>(daemon.bad_messages));
  return w.text();
}

}  // namespace sched::daemon::http
