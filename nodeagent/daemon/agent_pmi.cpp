// The PMI side of MPI steps (issue 16 item 2, docs/protocol.md §6): each
// rank of a step run with --mpi=pmi2|pmi1 gets one end of a socket pair as
// PMI_FD=3, the agent keeps the other and answers it through the step's
// pmi::NodeServer. When every rank here is in a barrier the agent sends the
// node's entries to schedd (pmi.fence) and answers the barrier once schedd
// sends the whole step's (pmi.fence_done). A rank that aborts, or ends
// before it finalized, fails the step on every node (pmi.abort, then
// pmi.step_failed): the other ranks would otherwise wait in a fence forever.
//
// --mpi=pmix (Open MPI) goes the same way with the agent's PMIx server
// (agent_pmix.hpp) in place of the socket pairs: its fence data, one binary
// blob per node, travels in pmi.fence as the entry "pmix.<node>" (Z85 text,
// pmix_map.hpp), and every node's blobs, concatenated in the entries'
// order, answer libpmix's fence.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent.hpp"
#include "sched/agent/job_env.hpp"
#include "sched/agent/pmix_map.hpp"
#include "sched/pmi/process_mapping.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched::agent {
namespace {

bool uses_pmi(const proto::StepLaunch& launch) {
  const std::string mpi = launch.mpi.value_or("none");
  return mpi == "pmi2" || mpi == "pmi1" || mpi == "pmix";
}

bool uses_pmix(const proto::StepLaunch& launch) { return launch.mpi.value_or("none") == "pmix"; }

constexpr std::string_view kPmixEntry = "pmix.";  // pmi.fence entries of PMIx steps

std::string describe_end(int status) {
  return status < 0 ? "was killed by signal " + std::to_string(-status)
                    : "exited with status " + std::to_string(status);
}

}  // namespace

Agent::PmiConnection::~PmiConnection() {
  if (fd >= 0) ::close(fd);
}

bool Agent::PmiStep::initialized(int rank) const {
  return server ? server->initialized(rank) : pmix_connected.count(rank) > 0;
}

bool Agent::PmiStep::finalized(int rank) const {
  return server ? server->finalized(rank) : pmix_finalized.count(rank) > 0;
}

const std::optional<pmi::Failure>& Agent::PmiStep::failure() const {
  return server ? server->failure() : pmix_failure;
}

int Agent::pmi_connect(const proto::StepLaunch& launch, int rank, const TaskIdentity& who,
                       EnvPairs& env) {
  if (!uses_pmi(launch)) return -1;
  if (uses_pmix(launch)) {
    pmix_connect(launch, rank, who, env);
    return -1;
  }
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
  if (pmix_) fds.push_back(pmix_->wake_fd());
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
  serve_pmix();
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
  if (it != pmi_steps_.end() && it->second.pmix) {
    pmix_fence_done(done);
    return;
  }
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
  if (it == pmi_steps_.end() || (!it->second.server && !it->second.pmix)) return;
  PmiStep& step = it->second;
  const bool early =
      !step.finalized(rank) && (status != 0 || step.initialized(rank) || step.failure());
  if (!step.failed.empty() && message.empty()) message = step.failed;
  // A rank that aborted may end before schedd's pmi.step_failed comes back
  // (Open MPI exits once PMIx_Abort returns): its own reason then.
  if (message.empty() && step.failure() && step.failure()->rank == rank) {
    message = step.failure()->message;
  }
  if (early && !step.abort_sent && !step.ending) {
    step.abort_sent = true;
    std::string why = step.failure() && step.failure()->rank == rank
                          ? step.failure()->message
                          : describe_end(status) + " before MPI_Finalize";
    if (message.empty()) message = why;
    send(proto::type::kPmiAbort, proto::PmiAbort{job, step_id, options_.node_name, rank, why});
  }
  const bool more = std::any_of(step_tasks_.begin(), step_tasks_.end(), [&](const auto& entry) {
    return entry.second.job == job && entry.second.step == step_id;
  });
  if (!more) {
    if (step.pmix && pmix_) pmix_->drop_step(job, step_id);
    pmi_steps_.erase(it);
  }
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

// ---- --mpi=pmix

void Agent::pmix_connect(const proto::StepLaunch& launch, int rank, const TaskIdentity& who,
                         EnvPairs& env) {
  const auto map = make_pmix_map(launch.tasks, launch.nodes, launch.distribution.value_or("block"));
  const auto here = std::find(launch.nodes.begin(), launch.nodes.end(), options_.node_name);
  if (!map || here == launch.nodes.end()) {
    throw LaunchError("the step's layout gives this node no place in its PMIx process map");
  }
  if (!pmix_) {
    try {
      pmix_ = std::make_unique<PmixServer>(options_.node_name, options_.spool_dir + "/pmix");
    } catch (const std::runtime_error& e) {
      throw LaunchError(std::string("cannot start the node's PMIx server: ") + e.what());
    }
    spdlog::info("PMIx server started ({})", options_.spool_dir + "/pmix");
  }
  PmiStep& step = pmi_steps_[{launch.job, launch.step}];
  step.pmix = true;
  const uid_t uid = who.user ? who.user->uid : ::getuid();
  const gid_t gid = who.user ? who.user->gid : ::getgid();
  try {
    pmix_->add_rank(launch.job, launch.step, *map, static_cast<int>(here - launch.nodes.begin()),
                    rank, uid, gid, env, launch.pmix_parent);
  } catch (const std::runtime_error& e) {
    throw LaunchError(e.what());
  }
  // Virtual nodes share one host, and Open MPI names its shared-memory
  // segments by host name, job and local rank: ranks of two virtual nodes
  // would map each other's. The job's folder in this agent's spool keeps them
  // apart (it is per node, the job's user's, and goes with the job), unless
  // the user chose one.
  const bool chosen = std::any_of(env.begin(), env.end(), [](const auto& entry) {
    return entry.first == "OMPI_MCA_btl_vader_backing_directory";
  });
  if (options_.cores > 0 && !chosen) {
    set_env(env, "OMPI_MCA_btl_vader_backing_directory", job_dir(launch.job));
  }
}

void Agent::serve_pmix() {
  if (!pmix_) return;
  for (PmixEvent& event : pmix_->take_events()) {
    if (event.kind >= PmixEvent::Kind::Spawn) {
      pmix_request(event);
      continue;
    }
    const auto it = pmi_steps_.find({event.job, event.step});
    if (it == pmi_steps_.end()) continue;
    PmiStep& step = it->second;
    switch (event.kind) {
      case PmixEvent::Kind::Connected:
        step.pmix_connected.insert(event.rank);
        break;
      case PmixEvent::Kind::Finalized:
        step.pmix_finalized.insert(event.rank);
        break;
      case PmixEvent::Kind::Aborted:
        if (!step.pmix_failure) {
          step.pmix_failure = pmi::Failure{
              event.rank,
              "rank " + std::to_string(event.rank) + " aborted with exit code " +
                  std::to_string(event.status) +
                  // Open MPI's MPI_Abort says "N/A" here.
                  (event.data.empty() || event.data == "N/A" ? "" : " (" + event.data + ")")};
        }
        if (!step.abort_sent && !step.ending) {
          step.abort_sent = true;
          send(proto::type::kPmiAbort, proto::PmiAbort{event.job, event.step, options_.node_name,
                                                       event.rank, step.pmix_failure->message});
        }
        break;
      case PmixEvent::Kind::Fence: {
        if (step.ending) break;
        proto::PmiFence fence;
        fence.job = event.job;
        fence.step = event.step;
        fence.node = options_.node_name;
        fence.fence = ++step.pmix_fences;
        fence.entries[std::string(kPmixEntry) + options_.node_name] = encode_fence_blob(event.data);
        send(proto::type::kPmiFence, fence);
        break;
      }
      default:  // MPI_Comm_spawn's, taken by pmix_request above
        break;
    }
  }
}

void Agent::pmix_fence_done(const proto::PmiFenceDone& done) {
  PmiStep& step = pmi_steps_.at({done.job, done.step});
  if (done.fence != step.pmix_fences) {
    spdlog::warn("job {} step {}: PMIx fence {} done, but this node is at fence {}", done.job,
                 done.step, done.fence, step.pmix_fences);
    return;
  }
  // Each node's blob, in the entries' (node name) order: libpmix reads them
  // one after another.
  std::string data;
  for (const auto& [key, value] : done.entries) {
    const auto blob = key.starts_with(kPmixEntry) ? decode_fence_blob(value) : std::nullopt;
    if (!blob) {
      spdlog::warn("job {} step {}: PMIx fence {}: entry {} is not a node's PMIx data", done.job,
                   done.step, done.fence, key);
      continue;
    }
    data += *blob;
  }
  if (!pmix_ || !pmix_->fence_done(done.job, done.step, std::move(data))) {
    spdlog::warn("job {} step {}: PMIx fence {} done, but none is open here", done.job, done.step,
                 done.fence);
  }
}

// ---- MPI_Comm_spawn (docs/protocol.md §6)

void Agent::pmix_request(PmixEvent& event) {
  const std::string& node = options_.node_name;
  switch (event.kind) {
    case PmixEvent::Kind::Spawn: {
      proto::PmixSpawn spawn = std::move(event.spawn);
      spawn.job = event.job;
      spawn.step = event.step;
      spawn.rank = event.rank;
      spawn.node = node;
      // Open MPI hands its ranks' OMPI_MCA_* to the children: the shared
      // memory folder this agent chose is this node's, not theirs.
      if (auto it = spawn.env.find("OMPI_MCA_btl_vader_backing_directory");
          it != spawn.env.end() && it->second == job_dir(event.job)) {
        spawn.env.erase(it);
      }
      pmix_spawns_[send(proto::type::kPmixSpawn, spawn)] = {event.id, event.job};
      spdlog::info("job {} step {}: rank {} spawns {} processes of {} (hosts '{}')", event.job,
                   event.step, event.rank, spawn.tasks, spawn.argv.front(), spawn.hosts);
      break;
    }
    case PmixEvent::Kind::Publish:
      spdlog::debug("job {}: PMIx publish of {} keys", event.job, event.entries.size());
      send(proto::type::kPmixPublish, proto::PmixPublish{event.job, node, event.entries});
      break;
    case PmixEvent::Kind::Lookup:
      spdlog::debug("job {}: PMIx lookup of {} keys (wait {})", event.job, event.keys.size(),
                    event.wait);
      send(proto::type::kPmixLookup,
           proto::PmixLookup{event.job, node, event.id, event.keys, event.wait});
      break;
    case PmixEvent::Kind::Connect: {
      if (event.fence) {
        spdlog::debug("job {}: PMIx fence {}", event.job, event.connect_id);
        proto::PmixConnect fence{event.job, node, event.connect_id, event.procs, {}};
        fence.entries["fence." + node] = encode_fence_blob(event.data);
        send(proto::type::kPmixConnect, fence);
        pmix_connects_[event.id] = std::move(event);
        break;
      }
      // This node's ranks of the connect: their data goes with it.
      std::vector<std::pair<std::string, int>> local;
      for (const std::string& proc : event.procs) {
        const std::size_t colon = proc.find(':');
        const std::int64_t step = std::atoll(proc.substr(0, colon).c_str());
        const auto launch = step_launches_.find({event.job, step});
        if (launch == step_launches_.end()) continue;
        const std::string which = proc.substr(colon + 1);
        for (int rank : launch->second.ranks) {
          if (which == "*" || which == std::to_string(rank)) {
            local.emplace_back(PmixServer::nspace(event.job, step), rank);
          }
        }
      }
      const std::uint64_t id = event.id;
      spdlog::debug("job {}: PMIx connect {} ({} ranks here)", event.job, event.connect_id,
                    local.size());
      pmix_connects_[id] = std::move(event);
      pmix_->gather(id, local);
      break;
    }
    case PmixEvent::Kind::ConnectReady: {
      const auto it = pmix_connects_.find(event.id);
      if (it == pmix_connects_.end()) break;
      if (event.status != 0) {
        spdlog::warn("job {}: PMIx connect {}: libpmix has no data for a rank here", it->second.job,
                     it->second.connect_id);
        pmix_->connect_done(event.id, false);
        pmix_connects_.erase(it);
        break;
      }
      send(proto::type::kPmixConnect,
           proto::PmixConnect{it->second.job, node, it->second.connect_id, it->second.procs,
                              std::move(event.entries)});
      break;
    }
    default:
      break;
  }
}

void Agent::on_pmix_spawn_reply(const proto::Envelope& reply) {
  const auto it = pmix_spawns_.find(reply.seq);
  if (it == pmix_spawns_.end() || !pmix_) return;
  const auto [id, job] = it->second;
  pmix_spawns_.erase(it);
  if (!*reply.ok) {
    spdlog::warn("MPI_Comm_spawn refused: {}",
                 reply.error ? reply.error->message : std::string("schedd said no"));
    pmix_->spawn_done(id, std::nullopt);
    return;
  }
  const auto spawned = reply.body_as<proto::PmixSpawned>();
  // The children's namespace: the spawner's job, the new step.
  pmix_->spawn_done(id, proto::pmix_nspace(job, spawned.step));
}

void Agent::on_pmix_connect_done(const proto::PmixConnectDone& done) {
  const auto it = std::find_if(pmix_connects_.begin(), pmix_connects_.end(), [&](const auto& c) {
    return c.second.job == done.job && c.second.connect_id == done.id;
  });
  if (it == pmix_connects_.end() || !pmix_) return;
  spdlog::debug("job {}: PMIx connect {} done ({} entries)", done.job, done.id,
                done.entries.size());
  bool ok = done.error.empty();
  if (!ok) spdlog::warn("job {}: PMIx connect {} failed: {}", done.job, done.id, done.error);
  if (it->second.fence) {
    // Each node's blob, in key order, as for the step's fences.
    std::string data;
    for (const auto& [key, value] : done.entries) {
      if (auto blob = key.starts_with("fence.") ? decode_fence_blob(value) : std::nullopt) {
        data += *blob;
      }
    }
    pmix_->connect_done(it->first, ok, data);
    pmix_connects_.erase(it);
    return;
  }
  try {
    // The other side's steps, for this node's ranks to know them.
    for (const proto::PmixStepMap& step : done.steps) {
      const auto map = make_pmix_map(step.tasks, step.nodes, step.distribution);
      if (!map) throw std::runtime_error("step " + std::to_string(step.step) + " has no map");
      pmix_->add_remote(done.job, step.step, *map, step.parent);
    }
    pmix_->keep_modex(done.job, done.entries);
  } catch (const std::runtime_error& e) {
    spdlog::warn("job {}: PMIx connect {}: {}", done.job, done.id, e.what());
    ok = false;
  }
  pmix_->connect_done(it->first, ok);
  pmix_connects_.erase(it);
}

void Agent::pmi_job_killed(JobId job) {
  for (auto& [key, step] : pmi_steps_) {
    if (key.first == job) step.ending = true;
  }
}

}  // namespace sched::agent
