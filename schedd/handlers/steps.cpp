// Job steps (`sched run`): a client inside a job runs a command across the
// job's nodes; the agents report the tasks' output and exits, which go on to
// that client, and the steps they run after each registration.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "access.hpp"
#include "handlers/handlers.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched::daemon::handlers {

void step_run(const Message& m) {
  const auto body = m.body<proto::StepRun>();
  DaemonParts& daemon = m.daemon;
  const Job* job = daemon.engine.find_job(body.job);
  if (!job) throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.job));
  require_owner(m, job->id, job->spec.user);
  if (job->state != JobState::Running && job->state != JobState::Adapting) {
    throw proto::ProtoError(proto::code::kConflict, "job " + std::to_string(body.job) + " is " +
                                                        std::string(to_string(job->state)) +
                                                        ", not running");
  }
  if (body.argv.empty()) throw proto::ProtoError(proto::code::kInvalid, "no command to run");
  const std::vector<std::string> job_nodes = convert::node_names(*job, daemon.engine.cluster());
  const int size = static_cast<int>(job_nodes.size());
  int nodes = body.nodes;
  if (body.nodelist) {
    // -w: the nodes named, which must be the job's, once each.
    const auto& named = *body.nodelist;
    for (auto it = named.begin(); it != named.end(); ++it) {
      if (std::find(job_nodes.begin(), job_nodes.end(), *it) == job_nodes.end()) {
        throw proto::ProtoError(
            proto::code::kInvalid,
            "--nodelist: " + *it + " is not a node of job " + std::to_string(body.job));
      }
      if (std::find(named.begin(), it, *it) != it) {
        throw proto::ProtoError(proto::code::kInvalid, "--nodelist: " + *it + " is named twice");
      }
    }
    if (named.empty() || (nodes != 0 && nodes != static_cast<int>(named.size()))) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "--nodelist names " + std::to_string(named.size()) +
                                  " nodes; the step asks for " + std::to_string(nodes));
    }
    nodes = static_cast<int>(named.size());
  }
  if (nodes == 0) nodes = body.tasks > 0 ? std::min(size, body.tasks) : size;
  if (nodes < 1 || nodes > size) {
    throw proto::ProtoError(
        proto::code::kInvalid,
        "the job has " + std::to_string(size) + " nodes; cannot run on " + std::to_string(nodes));
  }
  // ---- tasks (issue 16 item 1): what the step does not say, the job does
  // (as srun takes sbatch's -n, -c, -m and --cpu-bind).
  const JobSpec& spec = job->spec;
  if ((body.tasks_per_node && *body.tasks_per_node < 1) ||
      (body.cpus_per_task && *body.cpus_per_task < 1)) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "tasks per node and cpus per task must be at least 1");
  }
  int tasks = body.tasks;
  if (tasks <= 0) {
    // The job's -n is for the whole job: a step on all of its nodes.
    const bool job_tasks = !body.tasks_per_node && spec.layout->ntasks >= nodes && nodes == size;
    tasks =
        job_tasks ? spec.layout->ntasks : nodes * body.tasks_per_node.value_or(spec.tasks_per_node);
  }
  if (tasks < nodes) {
    throw proto::ProtoError(proto::code::kInvalid, std::to_string(tasks) + " tasks cannot use " +
                                                       std::to_string(nodes) + " nodes");
  }
  auto distribution = body.distribution ? tasks::parse_distribution(*body.distribution)
                                        : std::optional(spec.layout->distribution);
  if (!distribution) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "distribution '" + *body.distribution + "' is not block or cyclic");
  }
  auto cpu_bind =
      body.cpu_bind ? tasks::parse_cpu_bind(*body.cpu_bind) : std::optional(spec.layout->cpu_bind);
  if (!cpu_bind) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "cpu bind '" + *body.cpu_bind + "' is not none or cores");
  }
  // ---- MPI (issue 16 item 2): the step's PMI, else the site's default.
  const std::string mpi = body.mpi.value_or(daemon.config.mpi_default);
  if (mpi != "none" && mpi != "pmi2" && mpi != "pmi1" && mpi != "pmix") {
    throw proto::ProtoError(proto::code::kInvalid,
                            "mpi '" + mpi + "' is not pmi2, pmi1, pmix or none");
  }
  // ---- who starts an expansion's processes (docs/malleable.md "MPI
  // adaptations"): the program through MPI_Comm_spawn needs the step's PMIx
  // servers to relay it.
  const std::string mall_spawn = body.mall_spawn.value_or("sched");
  if (mall_spawn != "sched" && mall_spawn != "mpi") {
    throw proto::ProtoError(proto::code::kInvalid,
                            "mall_spawn '" + mall_spawn + "' is not mpi or sched");
  }
  if (mall_spawn == "mpi" && mpi != "pmix") {
    throw proto::ProtoError(proto::code::kInvalid,
                            "--mall-spawn=mpi needs --mpi=pmix (the step's mpi is " + mpi + ")");
  }
  const std::vector<std::string> step_nodes =
      body.nodelist ? *body.nodelist
                    : std::vector<std::string>(job_nodes.begin(), job_nodes.begin() + nodes);
  for (const std::string& node : step_nodes) {
    const AgentState* agent = daemon.agents.find(node);
    if (!agent || !agent->connected) {
      throw proto::ProtoError(proto::code::kUnavailable, "node " + node + " has no agent");
    }
  }
  StepRecord record;
  record.client = m.peer;
  record.remaining = record.tasks = tasks;
  proto::StepLaunch& launch = record.launch;
  launch.job = job->id;
  launch.step = daemon.steps.next_id(job->id);
  launch.argv = body.argv;
  launch.workdir = body.workdir.empty() ? job->spec.workdir : body.workdir;
  launch.env = body.env;
  launch.job_nodes = job_nodes;
  launch.nodes = step_nodes;
  launch.tasks = tasks;
  launch.job_name = job->spec.name;
  launch.user = job->spec.user;
  if (job->spec.extra->mem_bytes != 0)
    launch.mem_bytes = static_cast<std::int64_t>(job->spec.extra->mem_bytes);
  if (job->spec.extra->gpus_per_node > 0) launch.gpus = job->spec.extra->gpus_per_node;
  launch.array = convert::array_task_msg(job->spec);
  launch.tasks_per_node = job->spec.tasks_per_node;
  launch.power_w = convert::power_estimate(job->spec);
  launch.cpus_per_task = body.cpus_per_task.value_or(spec.layout->cpus_per_task);
  launch.distribution = std::string(tasks::to_string(*distribution));
  launch.cpu_bind = std::string(tasks::to_string(*cpu_bind));
  if (mpi != "none") launch.mpi = mpi;
  if (mall_spawn == "mpi") launch.mall_spawn = mall_spawn;
  if (!job->run->cores.empty()) launch.core_ids = convert::core_ids(*job, daemon.engine.cluster());
  const auto by_node = tasks::tasks_by_node(tasks::place_tasks(tasks, nodes, *distribution), nodes);
  for (int i = 0; i < nodes; ++i) {
    record.layout.emplace_back(step_nodes[static_cast<std::size_t>(i)],
                               by_node[static_cast<std::size_t>(i)]);
  }
  if (launch.mpi) record.mpi_nodes = record.fence_nodes();
  for (const auto& [node, ranks] : record.layout) {
    launch.ranks = ranks;
    daemon.agents.send(node, proto::type::kStepLaunch, launch);
  }
  const std::int64_t step = launch.step;
  daemon.steps.add(job->id, step, std::move(record));
  m.reply(proto::StepStarted{step, step_nodes, tasks});
}

void step_attach(const Message& m) {
  const auto body = m.body<proto::StepRef>();
  // Attaching takes the step's output: its owner's only.
  if (const Job* job = m.daemon.engine.find_job(body.job)) {
    require_owner(m, job->id, job->spec.user);
  }
  StepRecord* step = m.daemon.steps.find(body.job, body.step);
  if (!step) {
    throw proto::ProtoError(proto::code::kNotFound, "job " + std::to_string(body.job) +
                                                        " has no step " +
                                                        std::to_string(body.step) + " running");
  }
  step->client = m.peer;  // a new connection after a restart of either side
  m.reply(proto::Empty{});
}

void step_output(const Message& m) {
  const auto body = m.body<proto::StepOutput>();
  m.from_node(body.node);
  DaemonParts& daemon = m.daemon;
  if (const StepRecord* step = daemon.steps.find(body.job, body.step);
      step && !step->client.empty()) {
    // A spawned step's output is its parent's (the `sched run` that waits).
    proto::StepOutput out = body;
    if (step->parent != 0) out.step = step->parent;
    daemon.outbox.post(daemon.clients, step->client,
                       proto::encode_request(proto::type::kStepOutput, 0, out));
  }
}

void step_exited(const Message& m) {
  const auto body = m.body<proto::StepExited>();
  m.from_node(body.node);
  DaemonParts& daemon = m.daemon;
  const StepRecord* step = daemon.steps.find(body.job, body.step);
  if (!step) return;
  const std::string client = step->client;
  if (!client.empty() && step->parent == 0) {
    daemon.outbox.post(daemon.clients, client,
                       proto::encode_request(proto::type::kStepExited, 0, body));
  } else if (!client.empty() && (body.status != 0 || !body.message.empty())) {
    // A spawned process that failed fails its parent's `sched run` too.
    proto::StepExited parent = body;
    parent.step = step->parent;
    parent.message =
        "spawned step " + std::to_string(body.step) + " rank " + std::to_string(body.rank) + ": " +
        (body.message.empty() ? "exited with status " + std::to_string(body.status) : body.message);
    daemon.outbox.post(daemon.clients, client,
                       proto::encode_request(proto::type::kStepExited, 0, parent));
  }
  auto done = daemon.steps.task_exited(body.job, body.step);
  if (done) {
    // An MPI step's, when it ended, and those of the spawns that grew it.
    std::vector<std::int64_t> ended = daemon.steps.drop_adapted(body.job, body.step);
    ended.push_back(body.step);
    for (std::int64_t id : ended) {
      daemon.pmi_fences.drop(body.job, id);
      pmix_step_ended(daemon, body.job, id);
    }
  }
  if (done && !done->empty()) {
    daemon.outbox.post(
        daemon.clients, *done,
        proto::encode_request(proto::type::kStepDone, 0, proto::StepRef{body.job, body.step}));
  }
}

void step_running(const Message& m) {
  const auto body = m.body<proto::StepRunning>();
  m.from_node(body.node);
  const Engine& engine = m.daemon.engine;
  const Job* job = engine.find_job(body.launch.job);
  const auto index = engine.cluster().find(body.node);
  const bool here = index && holds_node(job, *index);
  // A step of a job that is not this node's any more is killed with it
  // (agent.register); nothing to adopt.
  if (here && m.daemon.steps.adopt(body.node, body.launch)) {
    spdlog::info("job {}: step {} adopted on {} ({} tasks)", body.launch.job, body.launch.step,
                 body.node, body.launch.ranks.size());
  }
}

}  // namespace sched::daemon::handlers
