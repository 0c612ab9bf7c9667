// An event as schedd publishes it and replays it from the journal
// (docs/protocol.md §9): the engine's event (convert::event_msg) with what
// schedd knows of its job — name, user, partition and, once it has ended,
// its exit code and failure reason — and a node event's reason.
#pragma once

#include "sched/event.hpp"
#include "sched/job.hpp"
#include "sched/proto/event_messages.hpp"

namespace sched::daemon {

// Every job's partition label until partitions are configured (issue 20:
// then each job's own).
inline constexpr const char* kDefaultPartition = "default";

// The partition label of `job` (kDefaultPartition without partitions, or
// for no job).
std::string partition_label(const Job* job, bool partitioned);

// `job`: the event's job when known (the engine's, else the journal's);
// `partitioned`: partitions are configured (Engine::partitioned).
proto::EventMsg published_event(const Event& event, const Job* job, bool partitioned = false);

// Whether the event is about a job of its own (auth.denied names the job a
// refused request was about, but nothing of it changed).
bool is_job_event(const Event& event);

}  // namespace sched::daemon
