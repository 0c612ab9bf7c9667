// Jobs: submit, cancel, and what clients ask of them (the live queue, one
// job, the accounting of ended ones).
#include <algorithm>
#include <filesystem>
#include <set>

#include "handlers/handlers.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

std::set<JobState> parse_states(const std::vector<std::string>& names) {
  std::set<JobState> states;
  for (const std::string& name : names) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    const auto state = parse_job_state(upper);
    if (!state)
      throw proto::ProtoError(proto::code::kInvalid,
                              "unknown job state '" + proto::excerpt(name) + "'");
    states.insert(*state);
  }
  return states;
}

proto::JobInfo info_of(const DaemonParts& daemon, const Job& job, int pending_rank) {
  // An ended job has given its nodes back: its journal record keeps them.
  if (is_terminal(job.state)) {
    if (auto stored = daemon.store.load_job(job.id)) {
      return convert::job_info(job, stored->nodes);
    }
  }
  return convert::job_info(job, daemon.engine.cluster(), pending_rank);
}

}  // namespace

void submit(const Message& m) {
  const auto body = m.body<proto::SubmitRequest>();
  StateStore& store = m.daemon.store;
  const double now = m.daemon.clock.now();
  if (body.request_id) {
    const std::string& id = *body.request_id;
    if (id.empty() || id.size() > proto::kMaxRequestIdBytes || !proto::valid_utf8(id)) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "request_id: 1 to " + std::to_string(proto::kMaxRequestIdBytes) +
                                  " bytes of UTF-8 ('" + proto::excerpt(id) + "')");
    }
    // A retry of a submission already taken: its first answer.
    if (const auto job = store.submission(id, now)) {
      m.reply(proto::SubmitReply{*job});
      return;
    }
  }
  JobSpec spec;
  if (auto error = convert::spec_from_wire(body.job, spec)) {
    throw proto::ProtoError(proto::code::kInvalid, *error);
  }
  if (spec.workdir.empty() || !std::filesystem::path(spec.workdir).is_absolute()) {
    throw proto::ProtoError(proto::code::kInvalid, "workdir must be an absolute path (got '" +
                                                       proto::excerpt(spec.workdir) + "')");
  }
  if (spec.command.empty()) throw proto::ProtoError(proto::code::kInvalid, "the script is empty");
  auto submitted = m.daemon.engine.submit(std::move(spec));
  if (!submitted.ok()) throw_status(submitted.status());
  ++m.daemon.submitted;
  if (body.request_id) {
    // In the same transaction as the job: both are journaled, or neither.
    store.forget_submissions(now);
    store.remember_submission(*body.request_id, submitted.value(),
                              now + proto::kSubmitRequestIdTtlS);
  }
  m.reply(proto::SubmitReply{submitted.value()});
}

void cancel(const Message& m) {
  const auto body = m.body<proto::JobRef>();
  Engine& engine = m.daemon.engine;
  // Jobs that ended before a restart are in the journal only.
  if (!engine.find_job(body.id) && m.daemon.store.load_job(body.id)) {
    throw proto::ProtoError(proto::code::kConflict,
                            "job " + std::to_string(body.id) + " has already ended");
  }
  if (const Status status = engine.cancel(body.id); !status.ok()) throw_status(status);
  m.reply(proto::Empty{});
}

void jobs_query(const Message& m) {
  const auto query = m.body<proto::JobsQuery>();
  const Engine& engine = m.daemon.engine;
  const std::set<JobState> states =
      query.states ? parse_states(*query.states) : std::set<JobState>{};
  std::map<JobId, int> rank;
  int r = 0;
  for (const Job* job : engine.pending_jobs()) rank[job->id] = r++;
  std::set<JobId> ids;
  if (query.ids) ids.insert(query.ids->begin(), query.ids->end());
  proto::JobList list;
  for (const auto& [id, job] : engine.jobs()) {
    if (states.empty() ? is_terminal(job->state) : !states.count(job->state)) continue;
    if (query.user && job->spec.user != *query.user) continue;
    if (!ids.empty() && !ids.count(id)) continue;
    auto it = rank.find(id);
    list.jobs.push_back(info_of(m.daemon, *job, it == rank.end() ? -1 : it->second));
  }
  // Running first by start, then pending in priority order (squeue's habit).
  std::sort(list.jobs.begin(), list.jobs.end(),
            [&](const proto::JobInfo& a, const proto::JobInfo& b) {
              const bool pa = a.state == "PENDING";
              const bool pb = b.state == "PENDING";
              if (pa != pb) return !pa;
              if (pa) return rank[a.id] < rank[b.id];
              return a.id < b.id;
            });
  m.reply(list);
}

void job_show(const Message& m) {
  const auto body = m.body<proto::JobRef>();
  const Engine& engine = m.daemon.engine;
  if (const Job* job = engine.find_job(body.id)) {
    int rank = -1;
    int r = 0;
    for (const Job* pending : engine.pending_jobs()) {
      if (pending->id == body.id) rank = r;
      ++r;
    }
    m.reply(proto::JobReply{info_of(m.daemon, *job, rank)});
  } else if (auto stored = m.daemon.store.load_job(body.id)) {
    m.reply(proto::JobReply{convert::job_info(stored->job, stored->nodes)});
  } else {
    throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
  }
}

void acct(const Message& m) {
  const auto query = m.body<proto::AcctQuery>();
  AcctQuery q;
  q.user = query.user;
  if (query.states) {
    for (JobState s : parse_states(*query.states)) q.states.push_back(s);
  }
  q.since = query.since;
  q.until = query.until;
  if (query.ids) q.ids = *query.ids;
  if (query.limit) q.limit = static_cast<std::size_t>(std::max<std::int64_t>(*query.limit, 1));
  proto::JobList list;
  for (const StoredJob& stored : m.daemon.store.finished_jobs(q)) {
    list.jobs.push_back(convert::job_info(stored.job, stored.nodes));
  }
  m.reply(list);
}

}  // namespace sched::daemon::handlers
