// The handlers of schedd's messages, by service; routes.cpp gives each its
// message type. A handler answers through its Message or throws
// proto::ProtoError (answered with that error).
#pragma once

#include "handlers/context.hpp"

namespace sched::daemon::handlers {

// jobs.cpp: submit, cancel and what clients ask of jobs.
void submit(const Message& m);
void cancel(const Message& m);
void jobs_query(const Message& m);
void job_show(const Message& m);
void acct(const Message& m);

// job_control.cpp: scontrol's hold, release and requeue.
void job_hold(const Message& m);
void job_release(const Message& m);
void job_requeue(const Message& m);

// nodes.cpp
void nodes_query(const Message& m);
void node_update(const Message& m);

// policy.cpp
void policy_info(const Message& m);
void policy_reload(const Message& m);
// ---- issue 22: check, set, history, rollback
void policy_check(const Message& m);
void policy_set(const Message& m);
void policy_history(const Message& m);
void policy_rollback(const Message& m);
void policy_snapshot(const Message& m);

// sessions.cpp: session.open (docs/protocol.md §2.1).
void session_open(const Message& m);

// cluster.cpp: the power corridor and the daemon's counters.
void corridor_set(const Message& m);
void corridor_show(const Message& m);
void stats(const Message& m);

// steps.cpp: `sched run` (clients), and the agents' reports of steps' tasks.
void step_run(const Message& m);
void step_attach(const Message& m);
void step_output(const Message& m);
void step_exited(const Message& m);
void step_running(const Message& m);

// pmi.cpp (issue 16 item 2): the PMI fence of MPI steps across nodes.
void pmi_fence(const Message& m);
void pmi_abort(const Message& m);
// pmix.cpp (issue 16 item 2): MPI_Comm_spawn of --mpi=pmix steps.
void pmix_spawn(const Message& m);
void pmix_publish(const Message& m);
void pmix_lookup(const Message& m);
void pmix_connect(const Message& m);
// A step ended or failed: connects that join it fail, and the job's keys go
// with its last step.
void pmix_step_ended(DaemonParts& daemon, JobId job, std::int64_t step);

// adaptations.cpp: the agents' side of the six-step adaptation.
void adapt_ready(const Message& m);
void adapt_complete(const Message& m);
void adapt_failed(const Message& m);

// agents.cpp: registration, heartbeats, batch scripts and measurements.
void agent_register(const Message& m);
void agent_heartbeat(const Message& m);
void task_started(const Message& m);
void task_exited(const Message& m);
void perf_report(const Message& m);
void power_report(const Message& m);

// ---- issue 17 item 1: resize.cpp, evolving jobs' requests: from the
// application through its agent, and `sched resize`.
void resize_request(const Message& m);
void job_resize(const Message& m);

// ---- issue 19: events.cpp: the journal's events (replay).
void events_replay(const Message& m);

// ---- issue 20 item 1: partitions.cpp
void partition_list(const Message& m);
void partition_update(const Message& m);
// ---- issue 20 items 3, 5: the negotiated partitions (negotiation.cpp)
void negotiation_info(const Message& m);

// Whether `job` (null: no such job) is not over and holds node `index`:
// what an agent runs of it on that node belongs there (defined in agents.cpp).
bool holds_node(const Job* job, NodeIndex index);

// ---- job arrays (issue 18 item 1): the job a JobRef names: `id`, or with
// array_task_id the task "id_index" (NotFound when there is none; jobs.cpp).
JobId resolve_array_task(const Engine& engine, const proto::JobTaskRef& ref);

}  // namespace sched::daemon::handlers
