// Between the engine's types and the wire's (docs/protocol.md): the wire
// speaks names ("malleable", "RUNNING", node names), the engine enums and
// node indices. The one place where these fields are mapped, for schedd and
// the sched CLI alike.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/convert/output_pattern.hpp"
#include "sched/engine.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/event_messages.hpp"

namespace sched::convert {

// A job spec as the CLI submits it.
proto::JobSpecMsg spec_to_wire(const JobSpec& spec);

// Bounds of a submitted spec's text (docs/protocol.md §4). Every string is
// valid UTF-8 without NUL bytes (the script may hold any UTF-8).
struct SpecTextLimits {
  static constexpr std::size_t kName = 256;
  static constexpr std::size_t kUser = 64;
  static constexpr std::size_t kScript = 1 << 20;  // 1 MiB
  static constexpr std::size_t kPath = 4096;       // workdir, output (PATH_MAX)
  static constexpr std::size_t kEnvVars = 1024;
  static constexpr std::size_t kEnvName = 256;
  static constexpr std::size_t kEnvValue = 128 << 10;  // Linux's MAX_ARG_STRLEN
  static constexpr std::size_t kEnvTotal = 1 << 20;    // names and values together
  static constexpr std::size_t kArgs = 4096;           // the script's arguments
  static constexpr std::size_t kArgsTotal = 1 << 20;   // their bytes together
};

// The first field of `in` whose text is out of bounds or not UTF-8, as an
// error for people that names it ("job.name: not valid UTF-8 ..."); nothing
// when all are fine.
std::optional<std::string> check_spec_text(const proto::JobSpecMsg& in);

// A submitted spec; an error for people when a name is unknown or a text
// field out of bounds (check_spec_text), and then `out` is untouched. Sizes
// and limits are checked afterwards by the engine (normalize_spec).
std::optional<std::string> spec_from_wire(const proto::JobSpecMsg& in, JobSpec& out);

// What clients see of a job. `pending_rank` is its place in the queue (0 for
// the head) when pending, used for the pending reason.
proto::JobInfo job_info(const Job& job, const Cluster& cluster, int pending_rank = -1);
// The same from a job that is no longer in the engine (the journal), with
// its node names.
proto::JobInfo job_info(const Job& job, const std::vector<std::string>& nodes);

// The batch script's launch, for the agent of the job's leader node.
proto::JobLaunch job_launch(const Job& job, const Cluster& cluster);
// A job's cores by node name (issue 20 item 2); empty for a job of whole nodes.
std::map<std::string, std::vector<int>> core_ids(const Job& job, const Cluster& cluster);

// What an array task's processes are told of its array (SLURM_ARRAY_*), for
// its batch script and its steps alike; nothing for a job outside an array.
std::optional<proto::ArrayTaskMsg> array_task_msg(const JobSpec& spec);

proto::EventMsg event_msg(const Event& event);

// The names of a job's nodes, leader first.
std::vector<std::string> node_names(const Job& job, const Cluster& cluster);

// A job's per-node power estimate for its agents (job.launch's power_w,
// which their power meter plugin uses to model or split a node's draw): the
// midpoint of power_min_w and power_max_w when both are given, else the one
// given, else 0 (none). Not the engine's figure: Engine::cluster_power_w
// counts the job's measured power, else the midpoint only when power_max_w
// is given, else the idle power.
double power_estimate(const JobSpec& spec);

// The output file of a job: its own with its patterns expanded
// (expand_output_pattern; `leader` is its leader node's name, empty while
// unknown), else <workdir>/sched-<id>.out.
std::string output_path(const Job& job, const std::string& leader = "");
// The file of its stderr when it has one of its own (-e), expanded alike.
std::optional<std::string> error_path(const Job& job, const std::string& leader = "");

}  // namespace sched::convert
