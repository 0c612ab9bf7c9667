// This node's part of an adaptation (docs/design.md §6, docs/protocol.md §8):
//
//   adapt.begin   start the new processes (an added node), tell the existing
//                 ones (proc.adapt_pending); each enters its window with
//                 proc.adapt_begin, whose answer waits
//   adapt.ready   → engine, once every process here has entered
//   adapt.go      answer the waiting proc.adapt_begin with the whole table
//   proc.adapt_commit from each → adapt.complete to the engine
//   adapt.abort   waiting processes get "aborted", new ones are killed
//
// An MPI expansion (adapt.begin's mall_spawn "mpi") starts nothing here: the
// program spawns its new processes once the window is open; schedd relays
// the spawn to the added nodes as a step whose processes are this
// adaptation's new ranks (StepTask::mall_step). ready counts the old
// processes only; a new one's proc.adapt_begin is answered at once, and
// its commit counts like the others'.
//
// A process of the step that has not initialised the library is waited for
// while it is young (it may be starting); an older one does not use the
// library and cannot take part: the adaptation fails at once (adapt.failed)
// and is rolled back.
#include <spdlog/spdlog.h>

#include "agent.hpp"
#include "sched/proto/error.hpp"
#include "sched/proto/transport.hpp"

namespace sched::agent {
void Agent::adapt_report(std::string_view type, JobId job, std::uint64_t adaptation,
                         const std::string& message) {
  proto::AdaptReport report;
  report.node = options_.node_name;
  report.job = job;
  report.adaptation = adaptation;
  report.message = message;
  send(type, report);
}

void Agent::on_adapt_begin(const proto::AdaptBegin& begin) {
  if (adapting_.count(begin.job)) {
    // The engine has moved on from the one we knew (it restarted, or
    // withdrew it in a message we have not seen): that one is over.
    adapt_drop(begin.job, "replaced by adaptation " + std::to_string(begin.adaptation));
  }
  const auto fail = [&](const std::string& why) {
    spdlog::warn("job {}: adaptation {} cannot go on here: {}", begin.job, begin.adaptation, why);
    adapt_report(proto::type::kAdaptFailed, begin.job, begin.adaptation, why);
  };
  const int window = static_cast<int>(begin.old_ranks.size());
  if (begin.new_ranks.size() != begin.old_ranks.size()) {
    return fail("old_ranks and new_ranks differ in length");
  }
  LocalAdaptation here;
  here.begin = begin;
  here.begin.launch.reset();
  // The step's processes here take part under their current rank, which is
  // their window rank (old ranks keep their numbers in the window).
  for (const auto& [task, step] : step_tasks_) {
    if (step.job != begin.job || step.lib_step() != begin.step || !step.joined) continue;
    const int rank = step.lib_rank();
    if (rank < 0 || rank >= window) {
      return fail("rank " + std::to_string(rank) + " is outside the window");
    }
    if (!library_.count({begin.job, begin.step, rank}) &&
        Clock::now() - step.started > kLibraryInitGrace) {
      return fail("rank " + std::to_string(rank) + " (pid " +
                  std::to_string(tasks_.pid(task).value_or(0)) +
                  ") has not initialised the malleable library");
    }
    here.expected.insert(rank);
  }
  if (begin.mall_spawn.value_or("") == "mpi") {
    // The new ranks placed here come by the program's spawn, later.
    if (!begin.hosts || begin.hosts->size() != begin.old_ranks.size()) {
      return fail("an MPI expansion without the node of each window rank");
    }
    for (int w = 0; w < window; ++w) {
      const auto i = static_cast<std::size_t>(w);
      if (begin.old_ranks[i] < 0 && (*begin.hosts)[i] == options_.node_name) here.joining.insert(w);
    }
    adapting_[begin.job] = here;
  } else if (begin.launch) {
    // Set up first, so that proc.init of a process started now finds it.
    for (int rank : begin.launch->ranks) here.joining.insert(rank);
    here.expected.insert(here.joining.begin(), here.joining.end());
    adapting_[begin.job] = here;
    const auto failed = launch_ranks(*begin.launch, false);
    if (!failed.empty()) {
      adapt_drop(begin.job, "launch failed");
      return fail("rank " + std::to_string(failed.front().first) +
                  " could not start: " + failed.front().second);
    }
  } else {
    adapting_[begin.job] = here;
  }
  spdlog::info("job {}: adaptation {} ({} {} -> {}), {} processes here", begin.job,
               begin.adaptation, begin.op, begin.old_size, begin.new_size,
               adapting_[begin.job].members().size());
  const proto::ProcAdaptNotice notice{begin.job, begin.adaptation};
  for (int rank : adapting_[begin.job].expected) {
    if (auto it = library_.find({begin.job, begin.step, rank}); it != library_.end()) {
      notify_process(it->second.peer, proto::type::kProcAdaptPending, notice);
    }
  }
  adapt_send_ready(begin.job);
}

void Agent::adapt_send_ready(JobId job) {
  LocalAdaptation& here = adapting_.at(job);
  if (here.ready_sent || here.waiting.size() < here.expected.size()) return;
  proto::AdaptReady ready;
  ready.node = options_.node_name;
  ready.job = job;
  ready.adaptation = here.begin.adaptation;
  for (int rank : here.expected) {
    ready.ranks.push_back(rank);
    ready.endpoints.push_back(library_.at({job, here.begin.step, rank}).endpoint);
  }
  send(proto::type::kAdaptReady, ready);
  here.ready_sent = true;
}

void Agent::on_proc_adapt_begin(const std::string& peer, const proto::Envelope& message) {
  const auto body = message.body_as<proto::ProcAdaptBegin>();
  auto it = adapting_.find(body.job);
  if (it == adapting_.end() || it->second.begin.step != body.step) {
    // Withdrawn between the notice and this call, or never begun.
    throw proto::ProtoError(proto::code::kAborted, "no adaptation of job " +
                                                       std::to_string(body.job) + " step " +
                                                       std::to_string(body.step) + " is under way");
  }
  LocalAdaptation& here = it->second;
  if (!here.members().count(body.rank)) {
    throw proto::ProtoError(proto::code::kInvalid, "rank " + std::to_string(body.rank) +
                                                       " takes no part in this adaptation on " +
                                                       options_.node_name);
  }
  if (!library_.count({body.job, body.step, body.rank})) {
    throw proto::ProtoError(proto::code::kInvalid, "rank " + std::to_string(body.rank) +
                                                       " has not initialised the library");
  }
  if (here.open) {
    // A process an MPI expansion spawned: the window it joins is open.
    adapt_answer(here, body.rank, peer, message.seq);
    return;
  }
  here.waiting[body.rank] = {peer, message.seq};
  adapt_send_ready(body.job);
}

void Agent::adapt_answer(const LocalAdaptation& here, int rank, const std::string& peer,
                         std::uint64_t seq) {
  proto::ProcAdaptBeginReply reply;
  reply.adaptation = here.begin.adaptation;
  reply.old_size = here.begin.old_size;
  reply.new_size = here.begin.new_size;
  reply.old_ranks = here.begin.old_ranks;
  reply.new_ranks = here.begin.new_ranks;
  reply.endpoints = here.endpoints;
  reply.hosts = here.begin.hosts;
  // A job resized by cores (issue 20 item 2): the cores the processes have now.
  reply.old_cores = here.begin.old_cores;
  reply.new_cores = here.begin.new_cores;
  if (here.begin.core_ids) {
    const auto mine = here.begin.core_ids->find(options_.node_name);
    if (mine != here.begin.core_ids->end())
      reply.node_cores = static_cast<int>(mine->second.size());
  }
  reply.window_rank = rank;
  send_local(peer, proto::encode_reply(proto::type::kProcAdaptBegin, seq, reply));
}

void Agent::on_adapt_go(const proto::AdaptGo& go) {
  auto it = adapting_.find(go.job);
  if (it == adapting_.end() || it->second.begin.adaptation != go.adaptation) {
    spdlog::warn("adapt.go for job {} adaptation {}, which is not under way here", go.job,
                 go.adaptation);
    return;
  }
  LocalAdaptation& here = it->second;
  if (go.endpoints.size() != here.begin.old_ranks.size()) {
    adapt_report(proto::type::kAdaptFailed, go.job, go.adaptation,
                 "adapt.go has " + std::to_string(go.endpoints.size()) +
                     " endpoints for a window of " + std::to_string(here.begin.old_ranks.size()));
    return;
  }
  here.open = true;
  here.endpoints = go.endpoints;
  for (const auto& [rank, waiter] : here.waiting)
    adapt_answer(here, rank, waiter.first, waiter.second);
  here.waiting.clear();  // answered; from now on only commits count
  if (here.members().empty()) adapt_finish(go.job);
}

void Agent::on_proc_adapt_commit(const std::string& peer, const proto::Envelope& message) {
  const auto body = message.body_as<proto::ProcAdaptCommit>();
  auto it = adapting_.find(body.job);
  if (it == adapting_.end() || it->second.begin.adaptation != body.adaptation || !it->second.open) {
    throw proto::ProtoError(proto::code::kConflict,
                            "adaptation " + std::to_string(body.adaptation) + " of job " +
                                std::to_string(body.job) + " has no open window here");
  }
  LocalAdaptation& here = it->second;
  const std::set<int> all = here.members();
  if (!all.count(body.window_rank)) {
    throw proto::ProtoError(
        proto::code::kInvalid,
        "window rank " + std::to_string(body.window_rank) + " takes no part here");
  }
  here.committed.insert(body.window_rank);
  send_local(peer, proto::encode_reply(message.type, message.seq, proto::Empty{}));
  if (here.committed.size() == all.size()) adapt_finish(body.job);
}

void Agent::adapt_finish(JobId job) {
  const LocalAdaptation here = std::move(adapting_.at(job));
  adapting_.erase(job);
  const proto::AdaptBegin& begin = here.begin;
  // The step's processes here take their new ranks; leavers keep the old
  // one for their exit report.
  for (auto& [task, step] : step_tasks_) {
    if (step.job != job || step.lib_step() != begin.step) continue;
    const int rank = step.lib_rank();
    if (rank < 0 || rank >= static_cast<int>(begin.new_ranks.size())) continue;
    const int renumbered = begin.new_ranks[static_cast<std::size_t>(rank)];
    step.joined = true;
    if (renumbered < 0) continue;
    (step.mall_step != 0 ? step.mall_rank : step.rank) = renumbered;
    step.tasks = begin.new_size;
  }
  std::map<std::tuple<JobId, std::int64_t, int>, LibraryProcess> renamed;
  for (auto it = library_.begin(); it != library_.end();) {
    const auto& [key_job, key_step, rank] = it->first;
    if (key_job != job || key_step != begin.step || rank < 0 ||
        rank >= static_cast<int>(begin.new_ranks.size())) {
      ++it;
      continue;
    }
    const int renumbered = begin.new_ranks[static_cast<std::size_t>(rank)];
    if (renumbered >= 0) renamed[{job, begin.step, renumbered}] = std::move(it->second);
    it = library_.erase(it);
  }
  library_.merge(renamed);
  phases_.erase(job);  // MTCT is measured anew at the new size
  adapt_report(proto::type::kAdaptComplete, job, begin.adaptation);
  spdlog::info("job {}: adaptation {} complete here", job, begin.adaptation);
}

void Agent::on_adapt_abort(const proto::AdaptAbort& abort) {
  auto it = adapting_.find(abort.job);
  if (it == adapting_.end() || it->second.begin.adaptation != abort.adaptation) return;
  adapt_drop(abort.job, abort.reason);
}

void Agent::adapt_drop(JobId job, const std::string& why) {
  auto it = adapting_.find(job);
  if (it == adapting_.end()) return;
  const LocalAdaptation here = std::move(it->second);
  adapting_.erase(it);
  spdlog::info("job {}: adaptation {} withdrawn here: {}", job, here.begin.adaptation, why);
  const std::string message =
      "adaptation " + std::to_string(here.begin.adaptation) + " withdrawn: " + why;
  const proto::ProcAdaptNotice notice{job, here.begin.adaptation};
  // Once the window is open the processes are past telling (the job fails).
  for (int rank : here.open ? std::set<int>{} : here.members()) {
    if (auto waiter = here.waiting.find(rank); waiter != here.waiting.end()) {
      send_local(waiter->second.first,
                 proto::encode_error(proto::type::kProcAdaptBegin, waiter->second.second,
                                     proto::code::kAborted, message));
    } else if (auto proc = library_.find({job, here.begin.step, rank}); proc != library_.end()) {
      notify_process(proc->second.peer, proto::type::kProcAdaptAbort, notice);
    }
  }
  // The processes it started never joined the step.
  for (auto& [task, step] : step_tasks_) {
    if (step.job == job && step.lib_step() == here.begin.step && !step.joined) {
      tasks_.kill(task, std::chrono::seconds(1));
    }
  }
}

void Agent::adapt_task_exited(JobId job, std::int64_t step, int rank, int status) {
  auto it = adapting_.find(job);
  if (it == adapting_.end() || it->second.begin.step != step) return;
  const LocalAdaptation& here = it->second;
  if (!here.members().count(rank) || here.committed.count(rank)) return;
  const std::uint64_t adaptation = here.begin.adaptation;
  const std::string why = "rank " + std::to_string(rank) + " ended (status " +
                          std::to_string(status) + ") before committing";
  adapt_drop(job, why);
  adapt_report(proto::type::kAdaptFailed, job, adaptation, why);
}

}  // namespace sched::agent
