#include "agent.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "sched/agent/job_env.hpp"
#include "sched/agent/mpi_hostfile.hpp"
#include "sched/plugins/loader.hpp"
#include "sched/proto/error.hpp"
#include "sched/proto/transport.hpp"

namespace sched::agent {
namespace {

// The node's name and its spool folder's: agents of two local clusters on
// one host may both be "n1", and must not clean up each other's cgroups; a
// restarted agent (same spool) finds its predecessor's. FNV-1a: the same in
// every build.
std::string cgroup_subtree_name(const std::string& node, const std::string& spool) {
  std::uint32_t hash = 2166136261u;
  for (const unsigned char c : std::filesystem::absolute(spool).lexically_normal().string()) {
    hash = (hash ^ c) * 16777619u;
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  return node + "." + hex;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

}  // namespace

Agent::Agent(AgentOptions options)
    : options_(std::move(options)), context_(1), socket_(context_, zmq::socket_type::dealer) {
  self_ = current_user();
  spdlog::info("runs jobs as {}", self_.uid == 0 ? std::string("their users")
                                                 : "'" + self_.name + "' only (unprivileged)");
  const NodeTopology host = discover_topology();
  topology_ = options_.cores > 0 ? virtual_topology(host, options_.cores) : host;
  if (options_.gpus >= 0) topology_.gpus = options_.gpus;
  try {
    core_cpus_ = core_cpus();
  } catch (const std::exception& e) {
    spdlog::warn("--cpu-bind=cores will not pin tasks here: {}", e.what());
  }
  if (options_.node_name.empty()) options_.node_name = topology_.hostname;
  if (options_.spool_dir.empty()) options_.spool_dir = "/tmp/sched-agent-" + options_.node_name;
  open_link();
  if (options_.power_meter == "auto") {
    std::string why;
    meter_ = plugins::open_default_power_meter(plugins::default_plugin_dirs(),
                                               options_.power_options, &why);
    spdlog::info("power: {}", why);
  } else {
    meter_ = plugins::load_power_meter(options_.power_meter, options_.power_options,
                                       plugins::default_plugin_dirs());
    spdlog::info("power: the {} meter", meter_->name());
  }
  std::string why;
  cgroups_ = open_cgroups(CgroupOptions{cgroup_subtree_name(options_.node_name, options_.spool_dir),
                                        options_.containment, options_.cgroup_root},
                          &why);
  spdlog::info("{}", why);
  // Cgroups an earlier agent here left: what they hold dies before this
  // agent registers (fencing, as for its process table).
  for (JobId job : cgroups_->clean_stale()) {
    spdlog::warn("job {}: the cgroup of an earlier agent was left; its processes were killed", job);
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.spool_dir, ec);
  // Users reach their own job's directory in it, and list nothing.
  namespace fs = std::filesystem;
  fs::permissions(options_.spool_dir,
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::replace, ec);
  // What an earlier agent here left running goes before this one registers
  // (fence_clean, at each registration until it is gone).
  task_file_ = options_.spool_dir + "/tasks";
  predecessor_ = read_task_records(task_file_);
}

void Agent::open_link() {
  handshakes_.reset();  // watches the socket replaced here
  socket_ = zmq::socket_t(context_, zmq::socket_type::dealer);
  socket_.set(zmq::sockopt::linger, 0);
  // Messages wait for the engine while it is away, up to a bound.
  socket_.set(zmq::sockopt::sndhwm, 10000);
  socket_.set(zmq::sockopt::reconnect_ivl, 100);
  socket_.set(zmq::sockopt::reconnect_ivl_max, 2000);
  secure_link();
  try {
    socket_.connect(options_.engine_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot connect to the engine at " + options_.engine_endpoint + ": " +
                             e.what());
  }
}

void Agent::check_link() {
  if (auto failure = handshakes_->failure()) {
    // libzmq gives up a connection whose handshake failed: a new socket
    // tries again later (the key may be authorised by then).
    spdlog::error("schedd: {}; trying again in {} s", *failure, kRelinkAfter.count());
    relink_at_ = Clock::now() + kRelinkAfter;
  }
  if (relink_at_ && Clock::now() >= *relink_at_) {
    relink_at_.reset();
    open_link();
    registered_ = false;
    next_register_ = Clock::now();
  }
}

void Agent::secure_link() {
  if (options_.secret_key_file.empty() || options_.server_public_key_file.empty()) {
    throw std::runtime_error(
        "the link to schedd is encrypted: give this agent its secret key (--secret-key-file) and "
        "schedd's public key (--server-public-key-file); `sched keys new` makes a key pair "
        "(docs/security.md §3)");
  }
  const auto own = proto::curve::read_secret_key_file(options_.secret_key_file);
  const auto server = proto::curve::read_public_key_file(options_.server_public_key_file);
  proto::curve::make_client(socket_, own, server);
  static int links = 0;  // each socket's monitor has its own endpoint
  handshakes_ = std::make_unique<proto::curve::HandshakeWatch>(context_, socket_,
                                                               "engine-" + std::to_string(++links));
  if (links == 1) spdlog::info("key {} (schedd: {})", own.public_key, server);
}

bool Agent::fence_clean() {
  if (!predecessor_.empty()) {
    spdlog::warn("{} tasks of an earlier agent on this node: killing them", predecessor_.size());
    predecessor_ = kill_recorded(predecessor_, std::chrono::seconds(5));
    if (!predecessor_.empty()) {
      spdlog::error("{} tasks of an earlier agent could not be killed; the node is not clean",
                    predecessor_.size());
    }
    save_records();
  }
  return predecessor_.empty();
}

void Agent::record_task(JobId job, TaskId task) {
  if (const auto pid = tasks_.pid(task)) records_[task] = task_record(job, task, *pid);
}

void Agent::save_records() {
  std::vector<TaskRecord> all = predecessor_;
  for (const auto& [task, record] : records_) all.push_back(record);
  try {
    write_task_records(task_file_, all);
  } catch (const std::exception& e) {
    spdlog::error("process table: {}", e.what());
  }
}

TaskIdentity Agent::task_identity(JobId job, const std::string& user, const std::string& leaf,
                                  std::int64_t mem_bytes) {
  TaskIdentity who;
  who.user = job_identity(user, self_, options_.allow_root_jobs);
  const auto mem = static_cast<std::uint64_t>(std::max<std::int64_t>(mem_bytes, 0));
  // From here on the job has something on this node to release.
  job_mem_.try_emplace(job, static_cast<std::int64_t>(mem));
  open_job_socket(job, *who.user);
  who.cgroup_procs = cgroups_->prepare(job, leaf, mem);
  // A job of an invasive partition: its cpuset too (issue 20 item 2).
  if (const std::vector<int> cpus = job_cpus(job); !cpus.empty()) {
    for (std::string& procs : cgroups_->confine_cpus(job, leaf, cpus)) {
      who.cgroup_procs.push_back(std::move(procs));
    }
  }
  return who;
}

void Agent::note_job_cores(JobId job,
                           const std::optional<std::map<std::string, std::vector<int>>>& core_ids) {
  if (!core_ids) return;
  const auto here = core_ids->find(options_.node_name);
  if (here != core_ids->end() && !here->second.empty()) job_cores_[job] = here->second;
}

void Agent::on_job_cores(const proto::JobCores& cores) {
  // Issue 20 item 2: a resize by cores. A node the job left has nothing to do.
  const auto here = cores.core_ids.find(options_.node_name);
  if (here == cores.core_ids.end() || here->second.empty()) return;
  job_cores_[cores.job] = here->second;
  const std::vector<int> cpus = job_cpus(cores.job);
  if (cpus.empty()) return;
  const bool cgroup = cgroups_->set_cpus(cores.job, cpus);
  int threads = 0;
  for (TaskId task : tasks_.tasks_of(cores.job)) threads += tasks_.set_affinity(task, cpus);
  spdlog::info("job {}: {} cores here now (cpus {}; {} threads pinned{})", cores.job,
               here->second.size(), cpus.size(), threads, cgroup ? ", cpuset updated" : "");
}

std::vector<int> Agent::job_cpus(JobId job) const {
  const auto it = job_cores_.find(job);
  if (it == job_cores_.end() || core_cpus_.empty()) return {};
  std::vector<int> cpus;
  for (int core : it->second) {
    if (core < 0) continue;
    const auto& real = core_cpus_[static_cast<std::size_t>(core) % core_cpus_.size()];
    cpus.insert(cpus.end(), real.begin(), real.end());
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void Agent::open_job_socket(JobId job, const UserIdentity& user) {
  if (job_sockets_.count(job)) return;
  const std::string dir = job_dir(job);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const auto give = [&](const std::string& path, fs::perms mode) {
    fs::permissions(path, mode, fs::perm_options::replace, ec);
    if (ec) throw std::runtime_error("cannot set the mode of " + path + ": " + ec.message());
    // The user's alone: their script, and the socket only they can open.
    if (self_.uid == 0 && ::chown(path.c_str(), user.uid, user.gid) < 0) {
      throw std::runtime_error("cannot give " + path + " to '" + user.name +
                               "': " + std::strerror(errno));
    }
  };
  give(dir, fs::perms::owner_all);
  const std::string path = fs::absolute(dir).string() + "/agent.ipc";
  JobSocket js{zmq::socket_t(context_, zmq::socket_type::router), "ipc://" + path};
  js.socket.set(zmq::sockopt::linger, 0);
  js.socket.set(zmq::sockopt::maxmsgsize, std::int64_t{1} << 20);
  try {
    js.socket.bind(js.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot listen for job processes on " + js.endpoint + ": " + e.what());
  }
  give(path, fs::perms::owner_read | fs::perms::owner_write);
  job_sockets_.emplace(job, std::move(js));
}

void Agent::send_local(const std::string& peer, std::string_view payload) {
  const auto colon = peer.find(':');
  if (colon == std::string::npos) return;
  const auto it = job_sockets_.find(std::stoll(peer.substr(0, colon)));
  if (it == job_sockets_.end()) return;  // the job is gone here, and its processes too
  proto::send_routed(it->second.socket, peer.substr(colon + 1), payload);
}

std::string Agent::job_dir(JobId job) const {
  return options_.spool_dir + "/job-" + std::to_string(job);
}

void Agent::release_ended_jobs() {
  // A kill's grace still running anywhere: its processes may be the job's.
  if (tasks_.next_deadline()) return;
  for (auto it = job_mem_.begin(); it != job_mem_.end();) {
    const JobId job = it->first;
    if (!tasks_.tasks_of(job).empty()) {
      ++it;
      continue;
    }
    if (!cgroups_->kill_all(job)) spdlog::error("job {}: its cgroup could not be emptied", job);
    if (!cgroups_->remove(job)) spdlog::warn("job {}: its cgroup could not be removed", job);
    job_sockets_.erase(job);
    suspended_.erase(job);
    std::error_code ec;
    std::filesystem::remove_all(job_dir(job), ec);
    job_cores_.erase(job);
    it = job_mem_.erase(it);
  }
}

void Agent::report_power() {
  if (!meter_) return;
  plugins::PowerContext ctx;
  ctx.idle_w = options_.idle_w;
  ctx.cores = topology_.cores;
  for (auto it = power_estimates_.begin(); it != power_estimates_.end();) {
    if (tasks_.tasks_of(it->first).empty()) {
      it = power_estimates_.erase(it);  // nothing of it runs here any more
      continue;
    }
    ctx.jobs.push_back({it->first, it->second});
    ++it;
  }
  const auto sample = meter_->sample(ctx, Clock::now());
  if (!sample) return;  // no interval yet, or the counters could not be read
  proto::PowerReport report;
  report.node = options_.node_name;
  report.node_w = sample->node_w;
  report.source = meter_->name();
  for (const auto& share : sample->jobs_w) report.jobs_w[std::to_string(share.job)] = share.watts;
  send(proto::type::kPowerReport, report);
}

void Agent::add_job_env(JobId job, EnvPairs& env) const {
  if (auto it = job_sockets_.find(job); it != job_sockets_.end()) {
    env.emplace_back("SCHED_AGENT_ENDPOINT", it->second.endpoint);
  }
  // A SCHED_MALL_BIND of the job's own wins.
  const bool bind_set = std::any_of(
      env.begin(), env.end(), [](const auto& pair) { return pair.first == "SCHED_MALL_BIND"; });
  if (!options_.data_address.empty() && !bind_set) {
    env.emplace_back("SCHED_MALL_BIND", options_.data_address);
  }
  // Virtual nodes share one host and its /tmp: Open MPI's daemons of two
  // virtual nodes would race to create the same session folder
  // (/tmp/ompi.HOST.UID/jf.N) and fail. TMPDIR at each node's folder of the
  // job keeps them apart, as separate machines' /tmp would; it replaces the
  // value a step inherits from the node it was started from. (Not
  // OMPI_MCA_orte_tmpdir_base: mpirun passes that one on its daemons'
  // command lines, the same for all.)
  if (options_.cores > 0) set_env(env, "TMPDIR", job_dir(job));
}

void Agent::log_unsent(std::string_view type) {
  spdlog::warn("{} not sent: the queue to the engine is full", type);
}

void Agent::send_register() {
  proto::AgentRegister reg;
  reg.node = options_.node_name;
  reg.hostname = topology_.hostname;
  reg.sockets = topology_.sockets;
  reg.cores = topology_.cores;
  reg.pus = topology_.pus;
  reg.memory_bytes = static_cast<std::int64_t>(topology_.memory_bytes);
  reg.gpus = topology_.gpus;
  for (const auto& [job, task] : batch_) reg.jobs.push_back(job);
  for (const auto& [seq, report] : unacked_exits_) reg.exits.push_back(report.job);
  reg.clean = fence_clean();
  reg.containment = std::string(cgroups_->kind());
  if (self_.uid != 0) reg.run_as = self_.name;
  register_seq_ = send(proto::type::kAgentRegister, reg);
  // Exits the engine has not acknowledged go again, after the registration.
  std::map<std::uint64_t, proto::TaskExited> again;
  for (auto& [seq, report] : unacked_exits_) again[send(proto::type::kTaskExited, report)] = report;
  unacked_exits_ = std::move(again);
  report_steps();
  next_register_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.register_retry_s));
}

void Agent::report_steps() {
  for (const auto& [key, launch] : step_launches_) {
    proto::StepRunning running;
    running.node = options_.node_name;
    running.launch = launch;
    running.launch.ranks.clear();
    for (const auto& [task, step] : step_tasks_) {
      if (step.job != key.first || step.step != key.second || !step.joined) continue;
      running.launch.ranks.push_back(step.rank);
      running.launch.tasks = step.tasks;
    }
    if (running.launch.ranks.empty()) continue;
    std::sort(running.launch.ranks.begin(), running.launch.ranks.end());
    send(proto::type::kStepRunning, running);
  }
}

void Agent::send_heartbeat() {
  proto::AgentHeartbeat beat;
  beat.node = options_.node_name;
  beat.load = load_average();
  for (const auto& [job, task] : batch_) beat.jobs.push_back(job);
  send(proto::type::kAgentHeartbeat, beat);
  report_power();
  // New measurements go with the heartbeat, asked for or not, so that the
  // engine's MTCT is never older than one heartbeat.
  for (const auto& [job, sums] : phases_) {
    if (sums.unreported) report_perf(job);
  }
  next_heartbeat_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(heartbeat_);
}

void Agent::run(const std::atomic<bool>& stop) {
  spdlog::info("node {} ({} cores) → engine {}", options_.node_name, topology_.cores,
               options_.engine_endpoint);
  send_register();
  while (!stop.load()) {
    const auto now = Clock::now();
    if (!registered_ && now >= next_register_) send_register();
    if (registered_ && now >= next_heartbeat_) send_heartbeat();

    std::vector<zmq::pollitem_t> items;
    items.push_back({socket_.handle(), 0, ZMQ_POLLIN, 0});
    for (auto& [job, js] : job_sockets_) items.push_back({js.socket.handle(), 0, ZMQ_POLLIN, 0});
    for (const TaskFd& fd : tasks_.poll_fds()) items.push_back({nullptr, fd.fd, ZMQ_POLLIN, 0});
    for (int fd : pmi_fds()) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
    auto wake = registered_ ? next_heartbeat_ : next_register_;
    if (auto deadline = tasks_.next_deadline()) wake = std::min(wake, *deadline);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now());
    try {
      zmq::poll(items, std::chrono::milliseconds(std::clamp<long>(wait.count(), 0, 100)));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    while (true) {
      zmq::message_t frame;
      if (!socket_.recv(frame, zmq::recv_flags::dontwait)) break;
      try {
        on_message(proto::decode(frame.data(), frame.size()));
      } catch (const proto::ProtoError& e) {
        spdlog::warn("message from the engine refused: {}", e.what());
      }
    }
    check_link();
    drain_local();
    serve_pmi();
    forward_output();
    report_exits();
    release_ended_jobs();
    check_cut_off();
  }
  stop_jobs();
}

void Agent::stop_jobs() {
  // Stopping the agent kills its jobs: their cgroups whole, then what the
  // process table knows; the cgroups and job folders then go.
  for (const auto& [job, mem] : job_mem_) cgroups_->kill_all(job);
  for (const auto& [job, task] : batch_) tasks_.kill(task, std::chrono::seconds(0));
  for (const auto& [task, step] : step_tasks_) tasks_.kill(task, std::chrono::seconds(0));
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (tasks_.size() > 0 && Clock::now() < give_up) {
    tasks_.reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  release_ended_jobs();
}

void Agent::check_cut_off() {
  // The engine takes a node it has not heard from for down_after_s for lost
  // and may run its jobs elsewhere: an agent that has not heard from the
  // engine that long stops them itself, and reports their ends once back.
  if (down_after_.count() <= 0 || (batch_.empty() && step_tasks_.empty())) return;
  if (cut_off_killed_ || Clock::now() - last_heard_ < down_after_) return;
  // Nothing starts while the engine is silent: these are all its jobs here.
  cut_off_killed_ = true;
  std::set<JobId> jobs;
  for (const auto& [job, task] : batch_) jobs.insert(job);
  for (const auto& [task, step] : step_tasks_) jobs.insert(step.job);
  for (JobId job : jobs) {
    spdlog::warn("no word from the engine for {:.1f} s: killing job {}", down_after_.count(), job);
    for (TaskId task : tasks_.tasks_of(job)) tasks_.kill(task, std::chrono::seconds(0));
  }
}

void Agent::drain_local() {
  std::vector<JobId> jobs;
  for (const auto& [job, js] : job_sockets_) jobs.push_back(job);
  for (JobId job : jobs) {
    for (int i = 0; i < 1000; ++i) {
      auto it = job_sockets_.find(job);
      if (it == job_sockets_.end()) break;
      auto routed = proto::receive_routed(it->second.socket);
      if (!routed) break;
      const std::string peer = std::to_string(job) + ":" + routed->peer;
      try {
        on_local(job, peer, proto::decode(routed->payload.data(), routed->payload.size(), 1 << 20));
      } catch (const proto::ProtoError& e) {
        spdlog::warn("message from a process of job {} refused: {}", job, e.what());
        send_local(peer, proto::encode_error("error", 0, e.code(), e.what()));
      }
    }
  }
}

namespace {

// A job's socket speaks for that job only.
void check_own_job(JobId socket_job, std::int64_t claimed) {
  if (claimed != socket_job) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "this connection belongs to job " + std::to_string(socket_job) +
                                ": a process reports only for its own job, not job " +
                                std::to_string(claimed));
  }
}

}  // namespace

void Agent::on_local(JobId job, const std::string& peer, const proto::Envelope& message) {
  namespace type = proto::type;
  if (message.type == type::kProcInit) {
    const auto init = message.body_as<proto::ProcInit>();
    check_own_job(job, init.job);
    // And only as a process of a step of it that runs here.
    const bool runs_here = std::any_of(step_tasks_.begin(), step_tasks_.end(), [&](const auto& e) {
      return e.second.job == init.job && e.second.lib_step() == init.step &&
             e.second.lib_rank() == init.rank;
    });
    if (!runs_here) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "job " + std::to_string(init.job) + " has no rank " +
                                  std::to_string(init.rank) + " of step " +
                                  std::to_string(init.step) + " on " + options_.node_name);
    }
    proto::ProcInitReply reply;
    reply.status = "existing";
    for (const auto& [task, step] : step_tasks_) {
      if (step.job == init.job && step.lib_step() == init.step) reply.size = step.tasks;
    }
    if (auto it = adapting_.find(init.job); it != adapting_.end() &&
                                            it->second.begin.step == init.step &&
                                            it->second.joining.count(init.rank)) {
      reply.status = "new";  // started by an expansion: goes to its window at once
      reply.size = it->second.begin.new_size;
    }
    library_[{init.job, init.step, init.rank}] = LibraryProcess{peer, init.endpoint};
    send_local(peer, proto::encode_reply(message.type, message.seq, reply));
    // A process the adaptation under way was waiting for: it takes part.
    if (auto it = adapting_.find(init.job); it != adapting_.end() && reply.status == "existing" &&
                                            it->second.begin.step == init.step &&
                                            it->second.expected.count(init.rank)) {
      notify_process(peer, type::kProcAdaptPending,
                     proto::ProcAdaptNotice{init.job, it->second.begin.adaptation});
    }
    spdlog::debug("job {} rank {} (pid {}) initialised", init.job, init.rank, init.pid);
  } else if (message.type == type::kProcPhase) {
    const auto phase = message.body_as<proto::ProcPhase>();
    check_own_job(job, phase.job);
    if (phase.comm_s < 0 || phase.compute_s < 0) {
      throw proto::ProtoError(proto::code::kInvalid, "phase times must not be negative");
    }
    Phases& sums = phases_[phase.job];
    sums.comm_s += phase.comm_s;
    sums.compute_s += phase.compute_s;
    ++sums.count;
    sums.unreported = true;
  } else if (message.type == type::kProcAdaptBegin) {
    check_own_job(job, message.body_as<proto::ProcAdaptBegin>().job);
    on_proc_adapt_begin(peer, message);
  } else if (message.type == type::kProcAdaptCommit) {
    check_own_job(job, message.body_as<proto::ProcAdaptCommit>().job);
    on_proc_adapt_commit(peer, message);
  } else if (message.type == type::kProcResize) {
    on_proc_resize(job, peer, message);
  } else if (message.type == type::kProcFinalize) {
    const auto body = message.body_as<proto::ProcFinalize>();
    check_own_job(job, body.job);
    std::erase_if(library_, [&](const auto& entry) {
      return std::get<0>(entry.first) == body.job && std::get<2>(entry.first) == body.rank &&
             entry.second.peer == peer;
    });
    send_local(peer, proto::encode_reply(message.type, message.seq, proto::Empty{}));
  } else {
    throw proto::ProtoError(proto::code::kUnknownType,
                            "unknown message type '" + message.type + "'");
  }
}

// ---- issue 17 item 1: a process's request, relayed to schedd as it is;
// schedd's reply and later answers come back to the process.
void Agent::on_proc_resize(JobId job, const std::string& peer, const proto::Envelope& message) {
  const auto body = message.body_as<proto::ProcResize>();
  check_own_job(job, body.job);
  if (!registered_) {
    throw proto::ProtoError(proto::code::kUnavailable,
                            "the node agent is not registered with schedd; ask again later");
  }
  proto::ResizeRequestMsg relay;
  relay.node = options_.node_name;
  relay.request = body;
  const std::uint64_t seq = send(proto::type::kResizeRequest, relay);
  resize_relays_[seq] = ResizeRelay{peer, message.seq};
}

void Agent::on_resize_reply(const proto::Envelope& reply) {
  const auto it = resize_relays_.find(reply.seq);
  if (it == resize_relays_.end()) return;
  const ResizeRelay relay = it->second;
  resize_relays_.erase(it);
  if (!*reply.ok) {
    const std::string code = reply.error ? reply.error->code : std::string(proto::code::kInternal);
    const std::string why = reply.error ? reply.error->message : "schedd refused the request";
    send_local(relay.peer, proto::encode_error(proto::type::kProcResize, relay.seq, code, why));
    return;
  }
  const auto answer = reply.body_as<proto::ResizeAnswer>();
  if (answer.state == "pending") resize_askers_[answer.request] = relay.peer;
  send_local(relay.peer, proto::encode_reply(proto::type::kProcResize, relay.seq, answer));
}

void Agent::on_resize_answer(const proto::ResizeAnswer& answer) {
  const auto it = resize_askers_.find(answer.request);
  if (it == resize_askers_.end()) return;  // asked through another node, or gone
  notify_process(it->second, proto::type::kProcResizeAnswer, answer);
  resize_askers_.erase(it);
}

void Agent::report_perf(JobId job) {
  proto::PerfReport report;
  report.node = options_.node_name;
  report.job = job;
  if (auto it = phases_.find(job); it != phases_.end()) {
    report.comm_s = it->second.comm_s;
    report.compute_s = it->second.compute_s;
    report.phases = it->second.count;
    it->second.unreported = false;
  }
  send(proto::type::kPerfReport, report);
}

void Agent::on_message(const proto::Envelope& message) {
  namespace type = proto::type;
  last_heard_ = Clock::now();
  cut_off_killed_ = false;  // should the engine fall silent again
  if (message.is_reply() && message.type == type::kPmixSpawn) {
    on_pmix_spawn_reply(message);
    return;
  }
  if (message.is_reply() && message.type == type::kResizeRequest) {
    on_resize_reply(message);
    if (*message.ok) return;  // an error reply goes on below (not_found: register again)
  }
  if (message.is_reply()) {
    if (message.type == type::kAgentRegister) {
      if (!*message.ok) {
        spdlog::error("registration refused: {}", message.error ? message.error->message : "");
        return;
      }
      const auto reply = message.body_as<proto::RegisterReply>();
      if (reply.heartbeat_s > 0) heartbeat_ = std::chrono::duration<double>(reply.heartbeat_s);
      if (reply.down_after_s > 0) down_after_ = std::chrono::duration<double>(reply.down_after_s);
      client_endpoint_ = reply.client_endpoint;
      if (!registered_) spdlog::info("registered with the engine");
      registered_ = true;
      next_heartbeat_ = Clock::now();
    } else if (message.type == type::kTaskExited && *message.ok) {
      // Only an ack that says the end is recorded lets the report go.
      if (message.body_as<proto::TaskExitedReply>().recorded) unacked_exits_.erase(message.seq);
    } else if (!*message.ok) {
      // The engine does not know us (it restarted): register again. A
      // refused exit report is kept; it goes again after the registration.
      if (message.error && message.error->code == proto::code::kNotFound && registered_) {
        spdlog::info("the engine does not know this node any more; registering again");
        registered_ = false;
        // A restarted engine has forgotten its adaptations: undo ours, so
        // that no process waits for a window that will never open.
        std::vector<JobId> adapting;
        for (const auto& [job, here] : adapting_) adapting.push_back(job);
        for (JobId job : adapting) adapt_drop(job, "the engine restarted");
        next_register_ = Clock::now();
      }
    }
    return;
  }
  if (message.type == type::kJobLaunch) {
    on_launch(message.body_as<proto::JobLaunch>());
  } else if (message.type == type::kJobKill) {
    on_kill(message.body_as<proto::JobKill>());
  } else if (message.type == type::kJobSuspend) {
    on_suspend(message.body_as<proto::JobSuspend>().job, true);
  } else if (message.type == type::kJobResume) {
    on_suspend(message.body_as<proto::JobSuspend>().job, false);
  } else if (message.type == type::kJobCores) {
    on_job_cores(message.body_as<proto::JobCores>());
  } else if (message.type == type::kStepLaunch) {
    on_step(message.body_as<proto::StepLaunch>());
  } else if (message.type == type::kPerfRequest) {
    report_perf(message.body_as<proto::PerfRequest>().job);
  } else if (message.type == type::kAdaptBegin) {
    on_adapt_begin(message.body_as<proto::AdaptBegin>());
  } else if (message.type == type::kAdaptGo) {
    on_adapt_go(message.body_as<proto::AdaptGo>());
  } else if (message.type == type::kAdaptAbort) {
    on_adapt_abort(message.body_as<proto::AdaptAbort>());
  } else if (message.type == type::kPmiFenceDone) {
    on_pmi_fence_done(message.body_as<proto::PmiFenceDone>());
  } else if (message.type == type::kPmiStepFailed) {
    on_pmi_step_failed(message.body_as<proto::PmiStepFailed>());
  } else if (message.type == type::kPmixLookupDone) {
    const auto done = message.body_as<proto::PmixLookupDone>();
    if (pmix_) pmix_->lookup_done(done.id, done.entries);
  } else if (message.type == type::kPmixConnectDone) {
    on_pmix_connect_done(message.body_as<proto::PmixConnectDone>());
  } else if (message.type == type::kResizeAnswer) {
    on_resize_answer(message.body_as<proto::ResizeAnswer>());
  } else {
    spdlog::warn("unknown message {} from the engine", message.type);
  }
}

void Agent::on_launch(const proto::JobLaunch& launch) {
  if (batch_.count(launch.job)) return;  // a repeated launch: it runs already
  BatchLaunch batch;
  batch.job = launch.job;
  batch.script = launch.script;
  batch.workdir = launch.workdir;
  batch.output_path = launch.output;
  batch.error_path = launch.error.value_or("");
  batch.args = launch.args.value_or(std::vector<std::string>{});
  batch.spool_dir = job_dir(launch.job);
  note_job_cores(launch.job, launch.core_ids);
  batch.cpus = job_cpus(launch.job);
  try {
    static_cast<TaskIdentity&>(batch) =
        task_identity(launch.job, launch.user, "batch", launch.mem_bytes.value_or(0));
    batch.env = job_environment(launch, options_.node_name, client_endpoint_);
    add_job_env(launch.job, batch.env);
    add_mpi_hostfiles(job_dir(launch.job), launch, batch.user, batch.env);
    const TaskId task = tasks_.launch_batch(batch);
    batch_[launch.job] = task;
    record_task(launch.job, task);
    save_records();
    power_estimates_[launch.job] = launch.power_w;
    proto::TaskStarted started;
    started.node = options_.node_name;
    started.job = launch.job;
    started.pid = tasks_.pid(task).value_or(0);
    send(proto::type::kTaskStarted, started);
    spdlog::info("job {} started (pid {})", launch.job, started.pid);
  } catch (const std::exception& e) {
    spdlog::warn("job {} could not start: {}", launch.job, e.what());
    proto::TaskExited exited;
    exited.node = options_.node_name;
    exited.job = launch.job;
    exited.status = 127;
    exited.message = e.what();
    unacked_exits_[send(proto::type::kTaskExited, exited)] = exited;
  }
}

void Agent::on_suspend(JobId job, bool suspend) {
  const auto tasks = tasks_.tasks_of(job);
  if (suspend) {
    if (suspended_.count(job)) return;
    // The freezer stops every process of the job's cgroup at once, forks
    // under way included; without one, the process groups get SIGSTOP.
    const bool frozen = cgroups_->freeze(job, true);
    if (!frozen) {
      for (TaskId task : tasks) tasks_.signal(task, SIGSTOP);
    }
    suspended_[job] = frozen;
    spdlog::info("job {}: suspended ({} tasks, {})", job, tasks.size(),
                 frozen ? "cgroup frozen" : "SIGSTOP");
    return;
  }
  const auto it = suspended_.find(job);
  if (it == suspended_.end()) return;
  if (it->second) {
    if (!cgroups_->freeze(job, false)) spdlog::error("job {}: its cgroup could not be thawed", job);
  } else {
    for (TaskId task : tasks) tasks_.signal(task, SIGCONT);
  }
  suspended_.erase(it);
  spdlog::info("job {}: resumed ({} tasks)", job, tasks.size());
}

void Agent::on_kill(const proto::JobKill& kill) {
  // A frozen job is thawed first: its processes must run to see SIGTERM.
  on_suspend(kill.job, false);
  const auto tasks = tasks_.tasks_of(kill.job);
  spdlog::info("job {}: killing {} tasks ({})", kill.job, tasks.size(), kill.reason);
  adapting_.erase(kill.job);
  pmi_job_killed(kill.job);
  for (TaskId task : tasks) tasks_.kill(task, std::chrono::duration<double>(kill.grace_s));
  if (tasks.empty() && !batch_.count(kill.job)) {
    // Nothing of it runs here (it ended, or never started): say so, so the
    // engine need not wait for its kill timeout.
    proto::TaskExited exited;
    exited.node = options_.node_name;
    exited.job = kill.job;
    exited.status = -9;
    exited.message = "not running on " + options_.node_name;
    unacked_exits_[send(proto::type::kTaskExited, exited)] = exited;
  }
}

void Agent::on_step(const proto::StepLaunch& launch) {
  // An MPI expansion's new processes join their step at the commit: until
  // then a failure is the adaptation's (and the spawn's, through PMIx).
  const bool expansion = launch.mall_step.has_value();
  if (expansion) {
    const auto it = adapting_.find(launch.job);
    const bool awaited = it != adapting_.end() && it->second.begin.step == *launch.mall_step &&
                         it->second.open && launch.mall_ranks &&
                         launch.mall_ranks->size() == launch.ranks.size() &&
                         std::all_of(launch.mall_ranks->begin(), launch.mall_ranks->end(),
                                     [&](int r) { return it->second.joining.count(r) > 0; });
    if (!awaited) {
      const std::string why = "no open expansion of step " + std::to_string(*launch.mall_step) +
                              " waits for these processes on " + options_.node_name;
      spdlog::warn("job {}: spawned step {} refused: {}", launch.job, launch.step, why);
      for (int rank : launch.ranks) pmi_launch_failed(launch, rank, why);
      return;
    }
  }
  for (const auto& [rank, error] : launch_ranks(launch, !expansion)) {
    pmi_launch_failed(launch, rank, error);
    if (expansion) {
      const std::uint64_t adaptation = adapting_.at(launch.job).begin.adaptation;
      adapt_drop(launch.job, "a spawned process could not start");
      adapt_report(proto::type::kAdaptFailed, launch.job, adaptation,
                   "rank " + std::to_string(rank) + " of the spawn could not start: " + error);
      return;
    }
    proto::StepExited exited;
    exited.job = launch.job;
    exited.step = launch.step;
    exited.node = options_.node_name;
    exited.rank = rank;
    exited.status = 127;
    exited.message = error;
    send(proto::type::kStepExited, exited);
  }
}

std::vector<int> Agent::bound_cpus(const proto::StepLaunch& launch, int local) const {
  // A job of an invasive partition: its tasks stay on its cores, and
  // --cpu-bind=cores binds within them (its k-th core for core k).
  const auto own = job_cores_.find(launch.job);
  if (launch.cpu_bind.value_or("none") != "cores" || core_cpus_.empty()) {
    return own != job_cores_.end() ? job_cpus(launch.job) : std::vector<int>{};
  }
  const int count =
      own != job_cores_.end() ? static_cast<int>(own->second.size()) : std::max(topology_.cores, 1);
  std::vector<int> cpus;
  for (int core : tasks::task_cores(local, launch.cpus_per_task.value_or(1), count)) {
    if (own != job_cores_.end())
      core = own->second[static_cast<std::size_t>(core) % own->second.size()];
    const auto& here = core_cpus_[static_cast<std::size_t>(core) % core_cpus_.size()];
    cpus.insert(cpus.end(), here.begin(), here.end());
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<std::pair<int, std::string>> Agent::launch_ranks(const proto::StepLaunch& launch,
                                                             bool joined) {
  std::vector<std::pair<int, std::string>> failed;
  TaskIdentity who;
  note_job_cores(launch.job, launch.core_ids);
  try {
    who = task_identity(launch.job, launch.user.value_or(""), "step_" + std::to_string(launch.step),
                        launch.mem_bytes.value_or(0));
  } catch (const std::exception& e) {
    for (int rank : launch.ranks) failed.emplace_back(rank, e.what());
    return failed;
  }
  int local = 0;
  for (int rank : launch.ranks) {
    StepLaunch step;
    static_cast<TaskIdentity&>(step) = who;
    step.job = launch.job;
    step.argv = launch.argv;
    step.workdir = launch.workdir;
    try {
      step.env = job_environment(launch, options_.node_name, client_endpoint_);
      add_job_env(launch.job, step.env);
      // The task's place in the step, as srun gives it.
      for (const auto& [name, value] : step_task_environment(launch, rank, local)) {
        set_env(step.env, name, value);
      }
      if (launch.mall_step) {
        // The malleable library sees the adaptation's rank of the grown
        // step; MPI its own (PMIx) rank.
        set_env(step.env, "SCHED_STEP_ID", std::to_string(*launch.mall_step));
        set_env(step.env, "SCHED_PROCID",
                std::to_string((*launch.mall_ranks)[static_cast<std::size_t>(local)]));
        set_env(step.env, "SCHED_NTASKS", std::to_string(launch.mall_size.value_or(launch.tasks)));
      }
      step.cpus = bound_cpus(launch, local);
      // --mpi: the rank's PMI connection; the agent closes the child's end
      // once the child has its own copy (or could not start).
      step.pmi_fd = pmi_connect(launch, rank, who, step.env);
      struct CloseAfter {
        int fd;
        ~CloseAfter() {
          if (fd >= 0) ::close(fd);
        }
      } close_after{step.pmi_fd};
      const TaskId task = tasks_.launch_step(step);
      step_launches_.try_emplace({launch.job, launch.step}, launch);
      StepTask started{launch.job, launch.step, rank, launch.tasks, joined, Clock::now()};
      if (launch.mall_step) {
        started.mall_step = *launch.mall_step;
        started.mall_rank = (*launch.mall_ranks)[static_cast<std::size_t>(local)];
        started.tasks = launch.mall_size.value_or(launch.tasks);
      }
      step_tasks_[task] = started;
      record_task(launch.job, task);
      power_estimates_[launch.job] = launch.power_w;
    } catch (const std::exception& e) {
      failed.emplace_back(rank, e.what());
    }
    ++local;
  }
  if (failed.size() < launch.ranks.size()) save_records();
  return failed;
}

void Agent::send_output(TaskId task, const std::vector<OutputChunk>& chunks) {
  auto it = step_tasks_.find(task);
  if (it == step_tasks_.end()) return;
  for (const OutputChunk& chunk : chunks) {
    if (chunk.bytes.empty()) continue;
    proto::StepOutput out;
    out.job = it->second.job;
    out.step = it->second.step;
    out.node = options_.node_name;
    out.rank = it->second.rank;
    out.stream = chunk.stream == Stream::Out ? "out" : "err";
    out.data = chunk.bytes;
    send(proto::type::kStepOutput, out);
  }
}

void Agent::forward_output() {
  // Steps' output goes to whoever ran them (sched run); batch scripts write
  // to their output file directly.
  for (const TaskFd& fd : tasks_.poll_fds()) {
    if (fd.event != FdEvent::Exited) send_output(fd.task, tasks_.read_output(fd.task));
  }
}

void Agent::report_exits() {
  const auto exits = tasks_.reap();
  for (const TaskExit& exit : exits) records_.erase(exit.task);
  if (!exits.empty()) save_records();
  for (const TaskExit& exit : exits) {
    if (auto step = step_tasks_.find(exit.task); step != step_tasks_.end()) {
      send_output(exit.task, exit.output);
      const StepTask ended = step->second;
      step_tasks_.erase(step);
      if (std::none_of(step_tasks_.begin(), step_tasks_.end(), [&](const auto& entry) {
            return entry.second.job == ended.job && entry.second.step == ended.step;
          })) {
        step_launches_.erase({ended.job, ended.step});
      }
      adapt_task_exited(ended.job, ended.lib_step(), ended.lib_rank(), exit.status);
      std::string message = exit.error;
      pmi_task_exited(ended.job, ended.step, ended.rank, exit.status, message);
      // A process an expansion started and that never joined is not the
      // step's (the engine counts it in only at the adaptation's end).
      if (!ended.joined) continue;
      proto::StepExited exited;
      exited.job = ended.job;
      exited.step = ended.lib_step();  // an MPI expansion's process counts in the grown step
      exited.node = options_.node_name;
      exited.rank = ended.lib_rank();
      exited.status = exit.status;
      exited.message = message;
      send(proto::type::kStepExited, exited);
      continue;
    }
    auto it = batch_.find(exit.job);
    if (it == batch_.end() || it->second != exit.task) continue;
    batch_.erase(it);
    phases_.erase(exit.job);
    adapting_.erase(exit.job);
    proto::TaskExited exited;
    exited.node = options_.node_name;
    exited.job = exit.job;
    exited.status = exit.status;
    exited.message = exit.error;
    const CgroupUsage usage = cgroups_->usage(exit.job);
    if (usage.max_rss_bytes) exited.max_rss_bytes = static_cast<std::int64_t>(*usage.max_rss_bytes);
    exited.cpu_s = usage.cpu_s;
    if (usage.oom_killed) {
      // Slurm's OUT_OF_MEMORY: the job failed, whatever its script made of it.
      const auto mem = job_mem_.find(exit.job);
      exited.message = "out of memory: the job went over its --mem limit" +
                       (mem != job_mem_.end() && mem->second > 0
                            ? " of " + std::to_string(mem->second >> 20) + " MiB"
                            : std::string()) +
                       " and the kernel killed its processes";
      if (exited.status == 0) exited.status = -9;
    }
    spdlog::info("job {} ended with status {}", exit.job, exit.status);
    unacked_exits_[send(proto::type::kTaskExited, exited)] = exited;
  }
}

}  // namespace sched::agent
