// scontrol's verbs on one job: hold, release, requeue (docs/protocol.md §4).
// The owner or an admin may; a hold an admin set only an admin lifts
// (Slurm's rule). The engine makes the change and publishes its events.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "sched/proto/client_messages.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

// The job the request names, checked to be the caller's (or the caller an
// admin). Jobs that ended before a restart are in the journal only.
const Job& owned_job(const Message& m, JobId id) {
  if (const Job* job = m.daemon.engine.find_job(id)) {
    require_owner(m, job->id, job->spec.user);
    return *job;
  }
  if (auto stored = m.daemon.store.load_job(id)) {
    require_owner(m, id, stored->job.spec.user);
    throw proto::ProtoError(proto::code::kConflict,
                            "job " + std::to_string(id) + " has already ended");
  }
  throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(id));
}

}  // namespace

void job_hold(const Message& m) {
  auto body = m.body<proto::JobTaskRef>();
  body.id = resolve_array_task(m.daemon.engine, body);
  owned_job(m, body.id);
  if (const Status status = m.daemon.engine.hold(body.id, caller_is_admin(m)); !status.ok()) {
    throw_status(status);
  }
  m.reply(proto::Empty{});
}

void job_release(const Message& m) {
  auto body = m.body<proto::JobTaskRef>();
  body.id = resolve_array_task(m.daemon.engine, body);
  const Job& job = owned_job(m, body.id);
  if (job.hold == HoldKind::Admin && !caller_is_admin(m)) {
    m.daemon.access.deny(m, proto::code::kPermissionDenied,
                         "permission denied: job " + std::to_string(body.id) +
                             " was held by an admin; only an admin may release it");
  }
  if (const Status status = m.daemon.engine.release(body.id); !status.ok()) throw_status(status);
  m.reply(proto::Empty{});
}

void job_requeue(const Message& m) {
  auto body = m.body<proto::JobTaskRef>();
  body.id = resolve_array_task(m.daemon.engine, body);
  owned_job(m, body.id);
  if (const Status status = m.daemon.engine.requeue(body.id); !status.ok()) throw_status(status);
  m.reply(proto::Empty{});
}

}  // namespace sched::daemon::handlers
