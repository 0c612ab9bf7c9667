// The native workload format: a TOML file listing the cluster, the jobs with
// every job field, and timed events (corridor changes, node failures). The
// format is described in docs/workload-format.md.
//
// The reader is strict: an unknown key, a value of the wrong type, an
// unknown kind or constraint, a duplicate id, a negative time or a spec that
// sched::normalize_spec rejects is an error naming the file and line, so a
// typo never silently changes an experiment.
#pragma once

#include <string>
#include <string_view>

#include "sched/sim/workload.hpp"

namespace sched::sim {

// Reads the file at `path`; throws WorkloadError ("FILE:LINE: what is
// wrong", or "FILE: cannot open ..." when it cannot be read).
Workload read_native(const std::string& path);

// The same, from text; `source_name` names it in messages and becomes
// Workload::source. Jobs come out sorted by (submit, id), events by time
// (file order among equal times).
Workload parse_native(std::string_view text, const std::string& source_name);

}  // namespace sched::sim
