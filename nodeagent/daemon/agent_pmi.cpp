// The PMI side of MPI steps (issue 16 item 2, docs/protocol.md §6): each
// rank of a step run with --mpi=pmi2|pmi1 gets one end of a socket pair as
// PMI_FD=3, the agent keeps the other and answers it through the step's
// pmi::NodeServer. When every rank here is in a barrier the agent sends the
// node's entries to schedd (pmi.fence) and answers the barrier once schedd
// sends the whole step's (pmi.fence_done). A rank that aborts, or ends
// before it finalized, fails the step on every node (pmi.abort, then
// pmi.step_failed): the other ranks would otherwise wait in a fence forever.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent.hpp"
#include "sched/agent/job_env.hpp"
#include "sched/pmi/process_mapping.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched::agent {
namespace {

bool uses_pmi(const proto::StepLaunch& launch) {
  const std::string mpi = launch.mpi.value_or("none");
  return mpi == "pmi2" || mpi == "pmi1";
}

std::string describe_end(int status) {
  return status < 0 ? "was killed by signal " + std::to_string(-status)
                    : "exited with status " + std::to_string(status);
}

}  // namespace

Agent::PmiConnection::~PmiConnection() {
  if (fd >= 0) ::close(fd);
}

int Agent::pmi_connect(const proto::StepLaunch& launch, int rank, EnvPairs& env) {
  if (!uses_pmi(launch)) return -1;
  const std::string kvsname =
      "sched-" + std::to_string(launch.job) + "." + std::to_string(launch.step);
  PmiStep& step = pmi_steps_[{launch.job, launch.step}];
  if (!step.server) {
    pmi::StepInfo info;
    info.kvsname = kvsname;
    info.size = launch.tasks;
    info.local_ranks = launch.ranks;
    // Which ranks share a node, from the step's layout (as schedd made it).
    const auto distribution = tasks::parse_distribution(launch.distribution.value_or("block"))
                                  .value_or(tasks::Distribution::Block);
    std::vector<int> node_of_rank;
    for (const tasks::TaskPlace& place :
         tasks::place_tasks(launch.tasks, static_cast<int>(launch.nodes.size()), distribution)) {
      node_of_rank.push_back(place.node);
    }
    info.preset["PMI_process_mapping"] = pmi::process_mapping(node_of_rank);
    step.server.emplace(std::move(info));
  }
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) < 0) {
    throw LaunchError(std::string("cannot make the rank's PMI connection: ") +
                      std::strerror(errno));
  }
  ::fcntl(ends[0], F_SETFL, O_NONBLOCK);
  PmiConnection& connection = step.connections[rank];
  if (connection.fd >= 0) ::close(connection.fd);
  connection.fd = ends[0];
  set_env(env, "PMI_FD", "3");
  set_env(env, "PMI_RANK", std::to_string(rank));
  set_env(env, "PMI_SIZE", std::to_string(launch.tasks));
  set_env(env, "PMI_JOBID", kvsname);
  return ends[1];
}

std::vector<int> Agent::pmi_fds() const {
  std::vector<int> fds;
  for (const auto& [key, step] : pmi_steps_) {
    for (const auto& [rank, connection] : step.connections) {
      if (connection.fd >= 0) fds.push_back(connection.fd);
    }
  }
  return fds;
}

void Agent::pmi_flush(PmiStep& step) {
  for (auto& [rank, connection] : step.connections) {
    connection.unsent += step.server->take_output(rank);
    while (connection.fd >= 0 && !connection.unsent.empty()) {
      const ssize_t n = ::send(connection.fd, connection.unsent.data(), connection.unsent.size(),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        connection.unsent.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        if (n < 0 && errno != EAGAIN) connection.unsent.clear();  // the rank is gone
        break;
      }
    }
  }
}

void Agent::serve_pmi() {
  for (auto& [key, step] : pmi_steps_) {
    if (!step.server) continue;
    for (auto& [rank, connection] : step.connections) {
      char buf[16 * 1024];
      // Bounded per turn of the loop, so one chatty rank cannot hold it.
      for (int reads = 0; connection.fd >= 0 && reads < 64; ++reads) {
        const ssize_t n = ::read(connection.fd, buf, sizeof buf);
        if (n > 0) {
          step.server->receive(rank, std::string_view(buf, static_cast<std::size_t>(n)));
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else if (n < 0 && errno == EAGAIN) {
          break;
        } else {
          // The rank closed its end: it ended (its exit says how).
          step.server->disconnect(rank);
          ::close(connection.fd);
          connection.fd = -1;
        }
      }
    }
    pmi_flush(step);
    if (auto entries = step.server->take_fence(); entries && !step.ending) {
      proto::PmiFence fence;
      fence.job = key.first;
      fence.step = key.second;
      fence.node = options_.node_name;
      fence.fence = step.server->fences();
      fence.entries = std::move(*entries);
      send(proto::type::kPmiFence, fence);
    }
    if (const auto& failure = step.server->failure(); failure && !step.abort_sent && !step.ending) {
      step.abort_sent = true;
      send(proto::type::kPmiAbort, proto::PmiAbort{key.first, key.second, options_.node_name,
                                                   failure->rank, failure->message});
    }
  }
}

void Agent::on_pmi_fence_done(const proto::PmiFenceDone& done) {
  const auto it = pmi_steps_.find({done.job, done.step});
  if (it == pmi_steps_.end() || !it->second.server) return;
  if (done.fence != it->second.server->fences()) {
    spdlog::warn("job {} step {}: PMI fence {} done, but this node is at fence {}", done.job,
                 done.step, done.fence, it->second.server->fences());
    return;
  }
  it->second.server->fence_done(done.entries);
  pmi_flush(it->second);
}

void Agent::on_pmi_step_failed(const proto::PmiStepFailed& failed) {
  const auto it = pmi_steps_.find({failed.job, failed.step});
  if (it == pmi_steps_.end()) return;
  it->second.ending = true;
  // Two nodes may each report a rank's end: the first word stays.
  if (it->second.failed.empty()) it->second.failed = failed.message;
  int killed = 0;
  for (const auto& [task, step] : step_tasks_) {
    if (step.job != failed.job || step.step != failed.step) continue;
    tasks_.kill(task, std::chrono::seconds(0));
    ++killed;
  }
  spdlog::info("job {} step {}: {}; {} ranks here killed", failed.job, failed.step, failed.message,
               killed);
}

void Agent::pmi_task_exited(JobId job, std::int64_t step_id, int rank, int status,
                            std::string& message) {
  serve_pmi();  // what the rank said last (finalize, abort) counts
  const auto it = pmi_steps_.find({job, step_id});
  if (it == pmi_steps_.end() || !it->second.server) return;
  PmiStep& step = it->second;  // what the rank said last (finalize, abort) counts
  const bool early = !step.server->finalized(rank) &&
                     (status != 0 || step.server->initialized(rank) || step.server->failure());
  if (!step.failed.empty() && message.empty()) message = step.failed;
  if (early && !step.abort_sent && !step.ending) {
    step.abort_sent = true;
    std::string why = step.server->failure() && step.server->failure()->rank == rank
                          ? step.server->failure()->message
                          : describe_end(status) + " before MPI_Finalize";
    if (message.empty()) message = why;
    send(proto::type::kPmiAbort, proto::PmiAbort{job, step_id, options_.node_name, rank, why});
  }
  const bool more = std::any_of(step_tasks_.begin(), step_tasks_.end(), [&](const auto& entry) {
    return entry.second.job == job && entry.second.step == step_id;
  });
  if (!more) pmi_steps_.erase(it);
}

void Agent::pmi_launch_failed(const proto::StepLaunch& launch, int rank, const std::string& error) {
  if (!uses_pmi(launch)) return;
  if (auto it = pmi_steps_.find({launch.job, launch.step}); it != pmi_steps_.end()) {
    if (it->second.abort_sent) return;
    it->second.abort_sent = true;
  }
  send(proto::type::kPmiAbort, proto::PmiAbort{launch.job, launch.step, options_.node_name, rank,
                                               "could not start: " + error});
}

void Agent::pmi_job_killed(JobId job) {
  for (auto& [key, step] : pmi_steps_) {
    if (key.first == job) step.ending = true;
  }
}

}  // namespace sched::agent
