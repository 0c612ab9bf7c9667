// The PMI fence of MPI steps (issue 16 item 2, docs/protocol.md §6): the
// agents' parts of each fence are gathered (pmi_fences.hpp) and the merged
// entries sent back to every node of the step; a rank's abort fails the
// step on every node.
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "handlers/handlers.hpp"
#include "sched/proto/pmi_messages.hpp"

namespace sched::daemon::handlers {
namespace {

// A step that ended meanwhile (its ranks were killed, the job cancelled)
// has nothing left to fence or fail: null, and no error (an agent takes
// not_found for "register again").
const StepRecord* step_of(const Message& m, JobId job, std::int64_t step) {
  const StepRecord* record = m.daemon.steps.find(job, step);
  if (!record) spdlog::debug("job {}: PMI message for step {}, which has ended", job, step);
  return record;
}

}  // namespace

void pmi_fence(const Message& m) {
  const auto body = m.body<proto::PmiFence>();
  m.from_node(body.node);
  const StepRecord* step = step_of(m, body.job, body.step);
  if (!step) return;
  std::vector<std::string> nodes;
  for (const auto& [node, ranks] : step->layout) {
    if (!ranks.empty()) nodes.push_back(node);
  }
  std::optional<PmiFences::Complete> done;
  try {
    done =
        m.daemon.pmi_fences.arrive(body.job, body.step, body.fence, nodes, body.node, body.entries);
  } catch (const std::invalid_argument& e) {
    throw proto::ProtoError(proto::code::kInvalid, e.what());
  }
  if (!done) return;
  proto::PmiFenceDone reply{body.job, body.step, body.fence, std::move(done->entries)};
  for (const std::string& node : nodes)
    m.daemon.agents.send(node, proto::type::kPmiFenceDone, reply);
  spdlog::debug("job {} step {}: PMI fence {} done ({} entries, {} nodes)", body.job, body.step,
                body.fence, reply.entries.size(), nodes.size());
}

void pmi_abort(const Message& m) {
  const auto body = m.body<proto::PmiAbort>();
  m.from_node(body.node);
  const StepRecord* step = step_of(m, body.job, body.step);
  if (!step) return;
  m.daemon.pmi_fences.drop(body.job, body.step);
  pmix_step_ended(m.daemon, body.job, body.step);
  const std::string why = "MPI step failed: rank " + std::to_string(body.rank) + " on " +
                          body.node + ": " + body.message;
  spdlog::info("job {} step {}: {}", body.job, body.step, why);
  const proto::PmiStepFailed failed{body.job, body.step, why};
  for (const auto& [node, ranks] : step->layout) {
    m.daemon.agents.send(node, proto::type::kPmiStepFailed, failed);
  }
}

}  // namespace sched::daemon::handlers
