// Jobs: submit, cancel, and what clients ask of them (the live queue, one
// job, the accounting of ended ones).
#include <filesystem>
#include <optional>

#include "handlers/handlers.hpp"
#include "handlers/pages.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {

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
  m.reply(
      jobs_page(m.daemon.engine, m.daemon.store, query, page_bounds(query.limit, m.daemon.config)));
}

void job_show(const Message& m) {
  const auto body = m.body<proto::JobRef>();
  const Engine& engine = m.daemon.engine;
  if (const Job* job = engine.find_job(body.id)) {
    // Its place in the queue, walked up to it (no copy of the queue).
    int rank = -1;
    if (job->state == JobState::Pending) {
      PendingQueue::Cursor walk = engine.pending_queue().cursor();
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
    m.reply(proto::JobReply{convert::job_info(stored->job, stored->nodes)});
  } else {
    throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
  }
}

void acct(const Message& m) {
  const auto query = m.body<proto::AcctQuery>();
  m.reply(acct_page(m.daemon.store, query, page_bounds(query.limit, m.daemon.config)));
}

}  // namespace sched::daemon::handlers
