// Jobs: submit, cancel, and what clients ask of them (the live queue, one
// job, the accounting of ended ones).
#include <pwd.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include "access.hpp"
#include "handlers/handlers.hpp"
#include "handlers/pages.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/job_array.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

// The user a submission is for: the caller's (never the body's), unless
// root submits for someone else by name.
std::string submitter(const Message& m, const std::string& named) {
  const auth::Caller& caller = caller_of(m);
  if (named.empty() || named == caller.user) return caller.user;
  if (caller.uid == 0) return named;
  m.daemon.access.deny(
      m, proto::code::kPermissionDenied,
      "permission denied: " + caller.user + " cannot submit jobs as " + proto::excerpt(named));
}

// Root by name, or by a name that is uid 0 on this host.
bool is_root_user(const std::string& user) {
  if (user == "root") return true;
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  return ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found &&
         found->pw_uid == 0;
}

}  // namespace

JobId resolve_array_task(const Engine& engine, const proto::JobTaskRef& ref) {
  if (!ref.array_task_id) return ref.id;
  if (auto id = engine.array_task(ref.id, *ref.array_task_id)) return *id;
  throw proto::ProtoError(proto::code::kNotFound,
                          "no job " + array_task_name(ref.id, *ref.array_task_id));
}

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
  proto::JobSpecMsg job = body.job;
  job.user = submitter(m, job.user);
  if (job.urgent) require_urgent(m);
  // Slurm: only an operator may raise a job's priority with a negative nice.
  if (job.nice && *job.nice < 0) require_admin(m, "a negative nice");
  JobSpec spec;
  if (auto error = convert::spec_from_wire(job, spec)) {
    throw proto::ProtoError(proto::code::kInvalid, *error);
  }
  if (spec.workdir.empty() || !std::filesystem::path(spec.workdir).is_absolute()) {
    throw proto::ProtoError(proto::code::kInvalid, "workdir must be an absolute path (got '" +
                                                       proto::excerpt(spec.workdir) + "')");
  }
  if (spec.command.empty()) throw proto::ProtoError(proto::code::kInvalid, "the script is empty");
  if (!m.daemon.config.allow_root_jobs && is_root_user(spec.user)) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "jobs of root are refused here: submit as another user (or set "
                            "allow_root_jobs in the [jobs] section of the config)");
  }
  // An array counts a job per task; a bad --array is the engine's to refuse.
  std::size_t adding = 1;
  if (!spec.extra->array.empty()) {
    auto array = parse_job_array(spec.extra->array, m.daemon.engine.config().max_array_size);
    if (array.ok()) adding = static_cast<std::size_t>(array->count());
  }
  m.daemon.access.admit_submission(m, spec.user, now,
                                   m.daemon.engine.pending_queue().count_of(spec.user), adding);
  auto submitted = m.daemon.engine.submit(std::move(spec));
  if (!submitted.ok()) throw_status(submitted.status());
  ++m.daemon.submitted;
  if (body.request_id) {
    // In the same transaction as the job: both are journaled, or neither.
    store.remember_submission(*body.request_id, submitted.value(),
                              now + proto::kSubmitRequestIdTtlS);
  }
  m.reply(proto::SubmitReply{submitted.value()});
}

void cancel(const Message& m) {
  auto body = m.body<proto::JobTaskRef>();
  Engine& engine = m.daemon.engine;
  const bool one_task = body.array_task_id.has_value();
  body.id = resolve_array_task(engine, body);
  if (const Job* job = engine.find_job(body.id)) {
    require_owner(m, job->id, job->spec.user);
    // scancel A: every task of array A that has not ended.
    if (!one_task && job->spec.extra->array_job_id == job->id) {
      auto cancelled = engine.cancel_array(job->id);
      if (!cancelled.ok()) throw_status(cancelled.status());
      if (*cancelled == 0) {
        throw proto::ProtoError(proto::code::kConflict,
                                "job array " + std::to_string(job->id) + " has already ended");
      }
      m.reply(proto::Empty{});
      return;
    }
  } else if (auto stored = m.daemon.store.load_job(body.id)) {
    // Jobs that ended before a restart are in the journal only.
    require_owner(m, body.id, stored->job.spec.user);
    throw proto::ProtoError(proto::code::kConflict,
                            "job " + std::to_string(body.id) + " has already ended");
  }
  if (const Status status = engine.cancel(body.id); !status.ok()) throw_status(status);
  m.reply(proto::Empty{});
}

void jobs_query(const Message& m) {
  const auto query = m.body<proto::JobsQuery>();
  proto::JobList page =
      jobs_page(m.daemon.engine, m.daemon.store, query, page_bounds(query.limit, m.daemon.config));
  // Others' jobs are listed as squeue lists them: not where they work or
  // write (docs/security.md §4).
  for (proto::JobInfo& info : page.jobs) {
    if (!may_see(m, info.user)) {
      info.workdir.clear();
      info.output.clear();
    }
  }
  // ---- priority (issue 18 item 5): what `sched prio -w` shows.
  const PriorityWeights& w = m.daemon.config.priority.weights;
  page.weights = proto::PriorityFactorsMsg{std::llround(w.age), std::llround(w.fairshare),
                                           std::llround(w.jobsize), std::llround(w.qos)};
  m.reply(page);
}

void job_show(const Message& m) {
  auto body = m.body<proto::JobTaskRef>();
  const Engine& engine = m.daemon.engine;
  body.id = resolve_array_task(engine, body);
  if (const Job* job = engine.find_job(body.id)) {
    require_owner(m, job->id, job->spec.user);
    // Its place in the queue, walked up to it (no copy of the queue).
    int rank = -1;
    if (job->state == JobState::Pending) {
      PendingQueue::Cursor walk = engine.pending_queue().listing();
      for (int r = 0; const Job* pending = walk.next(); ++r) {
        if (pending == job) {
          rank = r;
          break;
        }
      }
    }
    // An ended job has given its nodes back: its journal record keeps them.
    std::optional<StoredJob> stored;
    if (is_terminal(job->state)) stored = m.daemon.store.load_job(job->id);
    m.reply(proto::JobReply{stored ? convert::job_info(*job, stored->nodes)
                                   : convert::job_info(*job, engine.cluster(), rank)});
  } else if (auto stored = m.daemon.store.load_job(body.id)) {
    require_owner(m, body.id, stored->job.spec.user);
    m.reply(proto::JobReply{convert::job_info(stored->job, stored->nodes)});
  } else {
    throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
  }
}

void acct(const Message& m) {
  auto query = m.body<proto::AcctQuery>();
  // Users account for their own jobs (sacct's habit); admins for anyone's.
  if (!caller_is_admin(m)) {
    const std::string& self = caller_of(m).user;
    if (query.user && *query.user != self) {
      m.daemon.access.deny(
          m, proto::code::kPermissionDenied,
          "permission denied: " + self + " cannot see the jobs of " + proto::excerpt(*query.user));
    }
    query.user = self;
  }
  m.reply(acct_page(m.daemon.store, query, page_bounds(query.limit, m.daemon.config)));
}

}  // namespace sched::daemon::handlers
