#include "sched/convert/snapshot_convert.hpp"

#include "sched/convert/wire_convert.hpp"

namespace sched::convert {
namespace {

// What a twin needs of a spec: not the script's text, environment or
// arguments, which may be large and are never run there.
proto::JobSpecMsg lean_spec(const JobSpec& spec) {
  proto::JobSpecMsg out = spec_to_wire(spec);
  out.script.clear();
  out.env.clear();
  out.args.reset();
  return out;
}

proto::SnapshotJobMsg job_msg(const Job& job, const std::vector<std::string>& nodes) {
  proto::SnapshotJobMsg out;
  out.id = job.id;
  out.spec = lean_spec(job.spec);
  out.submit_time = job.submit_time;
  if (job.start_time >= 0) out.start_time = job.start_time;
  out.limit_extension = job.run->limit_extension;
  out.nodelist = nodes;
  out.mtct = job.run->mtct;
  out.priority = job.priority;
  if (job.hold != HoldKind::None) out.hold = job.hold == HoldKind::Admin ? "admin" : "user";
  return out;
}

std::optional<std::string> job_from_msg(const proto::SnapshotJobMsg& in, bool running, Job& out) {
  Job job;
  job.id = in.id;
  if (auto error = spec_from_wire(in.spec, job.spec)) {
    return "job " + std::to_string(in.id) + ": " + *error;
  }
  job.submit_time = in.submit_time;
  if (running) {
    if (!in.start_time) return "job " + std::to_string(in.id) + ": running without a start time";
    if (in.nodelist.empty()) return "job " + std::to_string(in.id) + ": running on no node";
    job.state = JobState::Running;
    job.start_time = *in.start_time;
  }
  job.run.edit().limit_extension = in.limit_extension;
  job.run.edit().mtct = in.mtct;
  job.run.reset_if_default();  // a waiting job's defaults keep no box
  job.priority = in.priority;
  if (in.hold) {
    if (*in.hold != "user" && *in.hold != "admin") {
      return "job " + std::to_string(in.id) + ": unknown hold '" + *in.hold + "'";
    }
    job.hold = *in.hold == "admin" ? HoldKind::Admin : HoldKind::User;
  }
  out = std::move(job);
  return std::nullopt;
}

}  // namespace

proto::PolicySnapshotReply snapshot_to_wire(const LiveSnapshot& snapshot) {
  proto::PolicySnapshotReply out;
  out.time = snapshot.now;
  for (const LiveSnapshot::Node& node : snapshot.nodes) {
    out.nodes.push_back({node.name, node.cores, node.gpus, node.up, node.draining});
  }
  for (const LiveSnapshot::Held& held : snapshot.running) {
    out.running.push_back(job_msg(held.job, held.nodes));
  }
  for (const Job& job : snapshot.pending) out.pending.push_back(job_msg(job, {}));
  out.window_s = snapshot.arrival_window_s;
  for (const LiveSnapshot::Arrival& arrival : snapshot.arrivals) {
    out.arrivals.push_back({arrival.id, arrival.time, lean_spec(arrival.spec)});
  }
  out.corridor_lower_w = snapshot.corridor_lower_w;
  out.corridor_upper_w = snapshot.corridor_upper_w;
  out.policy = snapshot.policy_name;
  out.policy_path = snapshot.policy_path;
  for (const auto& [key, value] : snapshot.policy_params) out.params[key] = value;
  for (const LiveSnapshot::PolicyFile& file : snapshot.policy_files) {
    out.policy_files.push_back({file.name, file.text});
  }
  return out;
}

std::optional<std::string> snapshot_from_wire(const proto::PolicySnapshotReply& in,
                                              LiveSnapshot& out) {
  LiveSnapshot snapshot;
  snapshot.now = in.time;
  for (const proto::SnapshotNodeMsg& node : in.nodes) {
    if (node.name.empty()) return std::string("a node without a name");
    snapshot.nodes.push_back({node.name, node.cores, node.gpus, node.up, node.draining});
  }
  for (const proto::SnapshotJobMsg& msg : in.running) {
    LiveSnapshot::Held held;
    if (auto error = job_from_msg(msg, true, held.job)) return error;
    held.nodes = msg.nodelist;
    snapshot.running.push_back(std::move(held));
  }
  for (const proto::SnapshotJobMsg& msg : in.pending) {
    Job job;
    if (auto error = job_from_msg(msg, false, job)) return error;
    snapshot.pending.push_back(std::move(job));
  }
  snapshot.arrival_window_s = in.window_s;
  for (const proto::SnapshotArrivalMsg& msg : in.arrivals) {
    LiveSnapshot::Arrival arrival;
    arrival.id = msg.id;
    arrival.time = msg.time;
    if (auto error = spec_from_wire(msg.spec, arrival.spec)) {
      return "arrival " + std::to_string(msg.id) + ": " + *error;
    }
    snapshot.arrivals.push_back(std::move(arrival));
  }
  snapshot.corridor_lower_w = in.corridor_lower_w;
  snapshot.corridor_upper_w = in.corridor_upper_w;
  snapshot.policy_name = in.policy;
  snapshot.policy_path = in.policy_path;
  for (const auto& [key, value] : in.params) snapshot.policy_params.emplace_back(key, value);
  for (const proto::PolicyFileMsg& file : in.policy_files) {
    snapshot.policy_files.push_back({file.name, file.text});
  }
  out = std::move(snapshot);
  return std::nullopt;
}

}  // namespace sched::convert
