// The PMI fence of MPI steps (issue 16 item 2, docs/protocol.md §6): the
// agents' parts of each fence are gathered (pmi_fences.hpp) and the merged
// entries sent back to every node of the step; a rank's abort fails the
// step on every node.
#include <spdlog/spdlog.h>

#include <set>
#include <stdexcept>
#include <vector>

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

// Fails the step on every node of it, and the steps it is joined to by
// MPI_Comm_spawn (its parent, its children): their ranks would otherwise
// wait for the dead ones in a collective over both.
void fail_step(DaemonParts& daemon, JobId job, std::int64_t id, const std::string& why,
               std::set<std::int64_t>& failed) {
  const StepRecord* step = daemon.steps.find(job, id);
  if (!step || !failed.insert(id).second) return;
  daemon.pmi_fences.drop(job, id);
  pmix_step_ended(daemon, job, id);
  spdlog::info("job {} step {}: {}", job, id, why);
  const proto::PmiStepFailed message{job, id, why};
  // Its nodes now and, for an MPI step that was shrunk, those it left
  // (ranks may wait there in MPI_Finalize).
  std::set<std::string> nodes;
  for (const auto& [node, ranks] : step->layout) nodes.insert(node);
  for (const std::string& node : step->mpi_nodes) nodes.insert(node);
  for (const std::string& node : nodes)
    daemon.agents.send(node, proto::type::kPmiStepFailed, message);
  constexpr std::string_view prefix = "MPI step failed: ";
  const std::string joined = std::string(prefix) + "spawn-connected step " + std::to_string(id) +
                             ": " + (why.starts_with(prefix) ? why.substr(prefix.size()) : why);
  std::vector<std::int64_t> linked = daemon.steps.children(job, id);
  if (step->parent != 0) linked.push_back(step->parent);
  for (std::int64_t other : linked) fail_step(daemon, job, other, joined, failed);
}

}  // namespace

void pmi_fence(const Message& m) {
  const auto body = m.body<proto::PmiFence>();
  m.from_node(body.node);
  const StepRecord* step = step_of(m, body.job, body.step);
  if (!step) return;
  const std::vector<std::string> nodes = step->fence_nodes();
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
  const std::string why = "MPI step failed: rank " + std::to_string(body.rank) + " on " +
                          body.node + ": " + body.message;
  std::set<std::int64_t> failed;
  fail_step(m.daemon, body.job, body.step, why, failed);
}

}  // namespace sched::daemon::handlers
