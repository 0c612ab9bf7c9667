// Evolving jobs' requests to grow or shrink (issue 17 item 1,
// docs/malleable.md): from the job's application through the agent of a
// node the job holds (resize.request), or from its owner or an admin
// (job.resize, `sched resize`). The engine takes or refuses the request
// (Engine::resize_request); ResizeRequests (resize_requests.hpp) answers the
// asker as the request goes on.
#include <cmath>

#include "handlers/handlers.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

// The engine's verdict on a request to go from the job's size to `nodes`.
// Grow or shrink follows from the size asked for; an app's explicit op
// must agree with it.
Status ask_engine(Engine& engine, const Job& job, int nodes) {
  const auto op = nodes > job.size() ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink;
  return engine.resize_request(job.id, ResizeRequest{op, nodes});
}

double checked_timeout(double timeout_s) {
  if (!std::isfinite(timeout_s) || timeout_s < 0) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "timeout_s must be a number of seconds, 0 for the default");
  }
  return timeout_s;
}

}  // namespace

void resize_request(const Message& m) {
  const auto body = m.body<proto::ResizeRequestMsg>();
  m.from_node(body.node);
  const proto::ProcResize& asked = body.request;
  const double timeout = checked_timeout(asked.timeout_s);
  Engine& engine = m.daemon.engine;
  ResizeRequests& requests = m.daemon.resizes;
  const ResizeRequests::Asker asker{body.node, {}};
  const Job* job = engine.find_job(asked.job);
  // Only an agent of a node the job holds speaks for its application.
  const auto index = engine.cluster().find(body.node);
  if (job && (!index || !holds_node(job, *index))) {
    Event event;
    event.node = body.node;
    event.message = "resize.request refused: job " + std::to_string(asked.job) +
                    " does not run on " + body.node;
    m.daemon.auth_denied(std::move(event));
    throw proto::ProtoError(
        proto::code::kPermissionDenied,
        "permission denied: job " + std::to_string(asked.job) + " does not run on " + body.node);
  }
  // Refusals are answers, not error replies: the agent relays them as they are.
  const auto refuse = [&](std::string_view code, const std::string& why) {
    m.reply(requests.refuse(asked.job, job ? job->size() : 0, asked.nodes, asker, std::string(code),
                            why));
  };
  if (!job) return refuse(proto::code::kNotFound, "no job " + std::to_string(asked.job));
  if (asked.op != "grow" && asked.op != "shrink") {
    return refuse(proto::code::kInvalid, "op '" + asked.op + "' is not grow or shrink");
  }
  if ((asked.op == "grow") != (asked.nodes > job->size())) {
    return refuse(proto::code::kConflict, "job " + std::to_string(job->id) + " holds " +
                                              std::to_string(job->size()) + " nodes; cannot " +
                                              asked.op + " to " + std::to_string(asked.nodes));
  }
  if (const Status status = ask_engine(engine, *job, asked.nodes); !status.ok()) {
    return refuse(wire_code(status.code()), status.message());
  }
  const Job* after = engine.find_job(asked.job);
  ResizeRequest taken{asked.op == "grow" ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink,
                      asked.nodes};
  m.reply(requests.add(*after, taken, asker, timeout, m.daemon.clock.now()));
}

void job_resize(const Message& m) {
  const auto body = m.body<proto::JobResize>();
  const double timeout = checked_timeout(body.timeout_s);
  Engine& engine = m.daemon.engine;
  const Job* job = engine.find_job(body.id);
  if (!job) {
    if (auto stored = m.daemon.store.load_job(body.id)) {
      require_owner(m, body.id, stored->job.spec.user);
      throw proto::ProtoError(proto::code::kConflict,
                              "job " + std::to_string(body.id) + " has already ended");
    }
    throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
  }
  require_owner(m, job->id, job->spec.user);
  const ResizeRequests::Asker asker{{}, caller_of(m).user};
  const ResizeRequest request{
      body.nodes > job->size() ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink, body.nodes};
  if (const Status status = ask_engine(engine, *job, body.nodes); !status.ok()) {
    m.daemon.resizes.refuse(job->id, job->size(), body.nodes, asker,
                            std::string(wire_code(status.code())), status.message());
    throw_status(status);
  }
  m.reply(m.daemon.resizes.add(*engine.find_job(body.id), request, asker, timeout,
                               m.daemon.clock.now()));
}

}  // namespace sched::daemon::handlers
