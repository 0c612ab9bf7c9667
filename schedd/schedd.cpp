#include "schedd.hpp"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <grp.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config_reload.hpp"
#include "event_log.hpp"
#include "event_wire.hpp"
#include "sched/convert/wire_convert.hpp"

namespace sched::daemon {

namespace {

// Binds `socket` and returns the endpoint it got (a port of 0 or * becomes
// the one the system chose).
std::string bind_endpoint(zmq::socket_t& socket, const std::string& endpoint, const char* what) {
  std::string wanted = endpoint;
  // ZeroMQ spells "any port" as *; accept the usual :0 too.
  if (wanted.size() > 2 && wanted.compare(wanted.size() - 2, 2, ":0") == 0) {
    wanted.replace(wanted.size() - 1, 1, "*");
  }
  try {
    socket.bind(wanted);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(std::string("cannot listen for ") + what + " on " + endpoint + ": " +
                             e.what());
  }
  return socket.get(zmq::sockopt::last_endpoint);
}

// The groups `user` is in, by name (a partition's AllowGroups): the system's
// view, as Slurm's.
std::vector<std::string> user_groups(const std::string& user) {
  std::vector<std::string> names;
  const passwd* pw = getpwnam(user.c_str());
  if (!pw) return names;
  int count = 64;
  std::vector<gid_t> gids(static_cast<std::size_t>(count));
  if (getgrouplist(user.c_str(), pw->pw_gid, gids.data(), &count) < 0) {
    gids.resize(static_cast<std::size_t>(count));
    if (getgrouplist(user.c_str(), pw->pw_gid, gids.data(), &count) < 0) return names;
  }
  gids.resize(static_cast<std::size_t>(count));
  for (gid_t gid : gids) {
    if (const group* gr = getgrgid(gid)) names.emplace_back(gr->gr_name);
  }
  return names;
}

EngineConfig engine_config(const DaemonConfig& config) {
  EngineConfig out;
  out.requeue_on_node_failure = config.on_failure == NodeFailureAction::Requeue;
  out.idle_w_per_node = config.idle_w_per_node;
  out.resize_backoff_s = config.adapt_backoff_s;
  out.mtct_window_s = config.mtct_window_s;
  out.mtct_refresh_fraction = config.mtct_refresh_fraction;
  out.revert_after_failures = config.policy_revert_after_failures;
  out.kill_invalid_depend = config.kill_invalid_depend;
  out.priority = config.priority;
  out.max_array_size = config.max_array_size;
  return out;
}

// Passes and enactment results that chain without settling are bounded: a
// policy that keeps acting is a bug, not a reason to stop serving.
constexpr int kMaxSettleRounds = 100;

constexpr const char* kNodesMeta = "nodes";
constexpr const char* kCorridorMeta = "corridor";
constexpr const char* kPartitionsMeta = "partitions";
constexpr const char* kCountersMeta = "counters";

}  // namespace

Daemon::Daemon(DaemonConfig config)
    : config_(std::move(config)),
      context_(1),
      clients_(context_, zmq::socket_type::router),
      agents_socket_(context_, zmq::socket_type::router),
      events_(context_, zmq::socket_type::pub),
      agents_(agents_socket_, outbox_),
      enactor_(agents_, steps_, config_.kill_grace_s, config_.kill_timeout_s),
      engine_(clock_, enactor_, engine_config(config_)) {
  complete_config(config_);
  enactor_.attach(engine_);
  enactor_.adaptations().set_timeout(config_.adapt_timeout_s);
  enactor_.adaptations().set_client_notice([this](const std::string& client,
                                                  const proto::StepResized& resized) {
    outbox_.post(clients_, client, proto::encode_request(proto::type::kStepResized, 0, resized));
  });
  for (zmq::socket_t* s : {&clients_, &agents_socket_, &events_}) s->set(zmq::sockopt::linger, 0);
  // Messages over the protocol's limit get an error reply; ZeroMQ itself
  // drops a peer only far beyond it (memory protection, no reply possible).
  const auto max_bytes =
      static_cast<std::int64_t>(std::max<std::size_t>(config_.max_message_bytes * 4, 16 << 20));
  clients_.set(zmq::sockopt::maxmsgsize, max_bytes);
  agents_socket_.set(zmq::sockopt::maxmsgsize, max_bytes);

  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  if (ec) {
    throw std::runtime_error("cannot create the state folder " + config_.state_dir + ": " +
                             ec.message());
  }
  lock_state_dir();
  store_ = StateStore::open(config_.state_dir + "/sched.db");
  engine_.add_sink(this);
  // ---- issue 20 item 1: partitions before the journal's nodes and jobs
  // come back into them (load_config has checked them).
  {
    std::vector<PartitionSpec> partitions;
    for (const auto& p : config_.partitions) partitions.push_back(p.spec);
    if (const Status status = engine_.set_partitions(std::move(partitions)); !status.ok()) {
      throw std::runtime_error("partitions: " + status.message());
    }
    engine_.set_group_lookup(user_groups);
  }

  secure_sockets();
  client_endpoint_ = bind_endpoint(clients_, config_.client_endpoint, "clients");
  agent_endpoint_ = bind_endpoint(agents_socket_, config_.agent_endpoint, "agents");
  event_endpoint_ = bind_endpoint(events_, config_.event_endpoint, "event subscribers");
  if (!config_.http_listen.empty()) http_ = std::make_unique<http::Front>(config_.http_listen);

  store_->begin();
  recover();
  restore_partition_states();
  // The corridor last set at run time wins over the configured one.
  double lower = config_.corridor_lower_w;
  double upper = config_.corridor_upper_w;
  if (auto saved = store_->meta(kCorridorMeta)) {
    const auto corridor = nlohmann::json::parse(*saved, nullptr, false);
    if (corridor.is_array() && corridor.size() == 2 && corridor[0].is_number() &&
        corridor[1].is_number()) {
      lower = corridor[0].get<double>();
      upper = corridor[1].get<double>();
    }
  }
  engine_.set_corridor(lower, upper);

  LuaPolicyOptions options;
  options.params = config_.params;
  options.time_limit_s = config_.policy_time_limit_s;
  // ---- issue 22: the last deployed version runs again, not the configured
  // file (docs/admin.md): from its file, as a reload would take an edit made
  // while schedd was down, or, when that does not load, from the journal's
  // copy. The first start journals the configured policy.
  policy_versions_ =
      std::make_unique<PolicyVersions>(*store_, config_.state_dir + "/policy-versions");
  const std::optional<PolicyVersionRecord> last = store_->last_policy_version();
  std::optional<std::string> path;
  if (last) {
    path = last->path;
    options.params = version_params(*last);
    if (resolve_policy_path(config_.policy, config_.policy_dir) != path) {
      spdlog::warn(
          "the config names policy {}, but version {} ({}) runs: after the first start the last "
          "deployed version runs; `sched policy set {}` deploys the config's",
          config_.policy, last->version, last->path, config_.policy);
    }
  } else {
    path = resolve_policy_path(config_.policy, config_.policy_dir);
  }
  policy_ = std::make_unique<PolicyHost>(engine_, options);
  if (!path) {
    throw std::runtime_error("no policy " + config_.policy + " (neither a file nor " +
                             config_.policy_dir + "/" + config_.policy + ".lua)");
  }
  Status loaded = policy_->load(*path);
  if (!loaded.ok() && last) {
    const std::string copy = policy_versions_->materialize(*last);
    if (copy != *path) {
      spdlog::warn("policy {} does not load ({}); running the stored copy of version {}", *path,
                   loaded.message(), last->version);
      loaded = policy_->load(copy);
    }
  }
  if (loaded.ok()) {
    policy_versions_->note(*policy_, "schedd", "load", clock_.now());
  } else {
    // Jobs in the journal must not be stranded by a bad edit: run without a
    // policy (nothing starts) until the file is fixed.
    const std::string why =
        "policy " + *path +
        " not loaded, scheduling nothing until it is fixed: " + loaded.message();
    spdlog::error("{}", why);
    // A refused load always leaves its typed failure.
    engine_.publish(policy_error_event(*policy_->last_failure(), why));
  }
  load_partition_policies(options);
  start_negotiations();
  commit();
  started_at_ = clock_.now();
  next_tick_ = started_at_;
  publish_http();
  next_policy_check_ = started_at_ + config_.policy_check_s;
  spdlog::info("schedd: clients {}, agents {}, events {}, state {}, policy {}", client_endpoint_,
               agent_endpoint_, event_endpoint_, config_.state_dir,
               policy_->current() ? policy_->current()->name() : "(none)");
  if (http_)
    spdlog::info("schedd: metrics at {}/metrics, web view at {}/", http_->url(), http_->url());
}

void Daemon::secure_sockets() {
  namespace fs = std::filesystem;
  namespace curve = proto::curve;
  // At their default places the files are made on first start, so that
  // schedd runs with no set-up and no agent may connect until one is added.
  const fs::path secret = config_.secret_key_file;
  if (!fs::exists(secret) && config_.secret_key_file == default_secret_key_file(config_)) {
    curve::write_key_pair(secret.parent_path(), secret.stem().string());
    spdlog::info("made schedd's key pair: {} (public: {}.pub)", secret.string(),
                 (secret.parent_path() / secret.stem()).string());
  }
  key_ = curve::read_secret_key_file(secret);
  const fs::path authorized = config_.authorized_agents_file;
  if (!fs::exists(authorized) &&
      config_.authorized_agents_file == default_authorized_agents_file(config_)) {
    std::error_code ec;
    fs::create_directories(authorized.parent_path(), ec);
    std::ofstream(authorized)
        << "# Node agents that may connect: <public-key> <node names>, one key a line.\n"
           "# `sched keys authorize` adds one (docs/security.md §3).\n";
  }
  agent_keys_ = std::make_unique<AuthorizedAgentsFile>(authorized);
  // The handler is bound before the CURVE sockets: libzmq lets every key in
  // while none is.
  zap_ = std::make_unique<ZapHandler>(
      context_, *agent_keys_,
      [this](const std::string& address, const std::string& key, const std::string& why) {
        Event event;
        event.message = "connection from " + address + " refused: " + why +
                        (key.empty() ? "" : " (key " + key + ")");
        auth_denied(std::move(event));
      });
  curve::make_server(agents_socket_, key_, kAgentDomain);
  // Off loopback, clients are encrypted too (any key: who the user is comes
  // with each request); on loopback the link never leaves this machine.
  if (!curve::is_loopback_endpoint(config_.client_endpoint)) {
    curve::make_server(clients_, key_, kClientDomain);
  }
  if (!curve::is_loopback_endpoint(config_.event_endpoint)) {
    curve::make_server(events_, key_, kClientDomain);
  }
}

void Daemon::auth_denied(Event event) {
  std::uint64_t held_back = 0;
  const bool admitted = auth_log_.admit(clock_.now(), held_back);
  if (held_back > 0) {
    spdlog::warn("{} more refusals neither logged nor published (at most {} per {} s)", held_back,
                 LogLimiter::kLines, LogLimiter::kIntervalS);
  }
  if (!admitted) return;
  // Logged once, as every event is, by on_event.
  event.type = EventType::AuthDenied;
  engine_.publish(std::move(event));
}

void Daemon::lock_state_dir() {
  // Two daemons on one journal would overwrite each other's state.
  const std::string path = config_.state_dir + "/schedd.lock";
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::runtime_error("another schedd uses the state folder " + config_.state_dir);
  }
}

Daemon::~Daemon() {
  try {
    commit();
  } catch (const std::exception& e) {
    spdlog::error("schedd: final commit failed: {}", e.what());
  }
  store_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void Daemon::run(const std::atomic<bool>& stop, std::atomic<bool>* reload) {
  std::vector<zmq::pollitem_t> items = {{clients_.handle(), 0, ZMQ_POLLIN, 0},
                                        {agents_socket_.handle(), 0, ZMQ_POLLIN, 0},
                                        {zap_->socket().handle(), 0, ZMQ_POLLIN, 0}};
  for (auto& n : negotiations_) n->add_poll_items(items);  // issue 20
  while (!stop.load()) {
    const double now = clock_.now();
    double next = std::min(next_tick_, next_policy_check_);
    // A time limit is enforced when it is due, not at the next tick. Limits
    // only move later, and a new job's lies ahead: one scan a turn is enough.
    next_time_limit_ = engine_.next_time_limit();
    if (next_time_limit_) next = std::min(next, *next_time_limit_);
    const long wait_ms = std::clamp(static_cast<long>(std::ceil((next - now) * 1000)), 0L, 100L);
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(wait_ms));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: check `stop`
      throw;
    }
    try {
      store_->begin();
      if (reload && reload->exchange(false)) {
        if (auto error = agent_keys_->reload())
          spdlog::error("{} (the keys read before stay)", *error);
        reload_config();
      }
      // Connections wait for their answer: before the messages.
      if (items[2].revents & ZMQ_POLLIN) zap_->answer();
      if (items[1].revents & ZMQ_POLLIN) drain_agents();
      if (items[0].revents & ZMQ_POLLIN) drain_clients();
      on_timers(clock_.now());
      // The negotiations' messages and agreed starts before the passes, the
      // passes' outcomes and queues after them (issue 20).
      if (!negotiations_.empty()) {
        for (auto& n : negotiations_) n->turn(clock_.now());
        settle(engine_, enactor_.results(), kMaxSettleRounds, "schedd");
        for (auto& n : negotiations_) n->turn(clock_.now());
      }
      settle(engine_, enactor_.results(), kMaxSettleRounds, "schedd");
      commit();
      publish_http();
    } catch (const std::exception& e) {
      // A journal that cannot be written (disk full, ...): nothing of this
      // turn is acknowledged; the next turn tries again.
      spdlog::error("schedd: {}", e.what());
      store_->rollback();
      outbox_.clear();
    }
  }
}

void Daemon::commit() {
  // ---- issue 17 item 1: the turn's request answers, journaled as events
  // now and sent after the replies (a "pending" reply before its "granted").
  std::vector<ResizeRequests::Outgoing> answers = resizes_.take();
  for (ResizeRequests::Outgoing& answer : answers) engine_.publish(answer.event);
  if (store_->in_transaction()) {
    save_counters();
    store_->commit();
  }
  outbox_.flush();
  for (const ResizeRequests::Outgoing& answer : answers) {
    if (!answer.node.empty()) agents_.send(answer.node, proto::type::kResizeAnswer, answer.answer);
  }
}

void Daemon::on_timers(double now) {
  // Time limits, the engine's rule (an adapting job is not timed out); the
  // poll wakes for the next one.
  if (next_time_limit_ && *next_time_limit_ <= now) engine_.expire_time_limits();
  if (now >= next_tick_) {
    next_tick_ = now + config_.tick_s;
    engine_.tick();
    sessions_.expire(now, config_.session_ttl_s);
    forget_old_jobs(now);
    // Silent agents.
    std::vector<std::string> silent;
    for (const auto& [node, agent] : agents_.all()) {
      if (agent.connected && now - agent.last_seen > config_.down_after_s) silent.push_back(node);
    }
    for (const std::string& node : silent) {
      node_lost(node, "no heartbeat for " + std::to_string(static_cast<int>(config_.down_after_s)) +
                          " s");
    }
    // Restored jobs nobody owned up to.
    for (auto it = awaiting_agent_.begin(); it != awaiting_agent_.end();) {
      if (it->second <= now) {
        spdlog::warn("job {}: no agent reported it after the restart; it ends as failed",
                     it->first);
        engine_.job_ended(it->first, -SIGKILL);
        it = awaiting_agent_.erase(it);
      } else {
        ++it;
      }
    }
    expire_fences(now);
    store_->forget_submissions(now);  // request ids past their time
    enactor_.adaptations().expire(now);
    for (JobId id : resizes_.expire(now)) (void)engine_.withdraw_resize_request(id);
    for (JobId id : enactor_.overdue_kills(now)) {
      spdlog::warn("job {}: no exit report after its kill; it ends anyway", id);
      engine_.job_ended(id, -SIGKILL);
    }
  }
  if (now >= next_policy_check_) {
    next_policy_check_ = now + config_.policy_check_s;
    // ---- issue 22: a file edit, or the engine's revert, is a version too
    if (policy_->reload_if_changed()) policy_versions_->note(*policy_, "schedd", "reload", now);
    for (auto& [name, host] : partition_policies_) {  // issue 20
      if (host->reload_if_changed()) policy_versions_->note(*host, "schedd", "reload", now);
    }
    for (auto& n : negotiations_) n->reload_policies();  // issue 20 items 3, 5
    if (auto error = agent_keys_->reload_if_changed()) {
      spdlog::error("{} (the keys read before stay)", *error);
    }
  }
}

void Daemon::node_lost(const std::string& node, const std::string& why) {
  node_reasons_[node] = why;  // logged with node.down (on_event)
  // Adaptations it took part in end first: an expansion rolled back gives
  // the node back before it goes down, so its job keeps running.
  enactor_.adaptations().node_lost(node);
  enactor_.results().feed(engine_);
  // Only registered agents are lost, and their nodes are known: ok. The
  // agent counts as connected until then, so that stopping its jobs does not
  // end them at once: what becomes of those it led is decided below.
  (void)engine_.set_node_up(node, false, why);
  AgentState* agent = agents_.find(node);
  if (agent) agent->connected = false;
  // Jobs led from that node that were already being stopped: their end will
  // never be reported.
  const auto index = engine_.cluster().find(node);
  if (!index) return;
  std::vector<JobId> orphans;
  for (const auto& [id, job] : engine_.jobs()) {
    if (!is_terminal(job->state) && !job->allocation.empty() && job->allocation.front() == *index &&
        job->state == JobState::Completing) {
      orphans.push_back(id);
    }
  }
  for (JobId id : orphans) {
    enactor_.forget_kill(id);
    if (config_.on_failure == NodeFailureAction::Requeue && agent) {
      // Fenced: its old run may go on out of sight; it must not run twice.
      spdlog::warn("job {}: requeued once its run on {} is known dead (at most {} s)", id, node,
                   config_.fence_timeout_s);
      agent->fenced.insert(id);
      agent->fence_until = clock_.now() + config_.fence_timeout_s;
    } else {
      engine_.job_ended(id, -SIGKILL);
    }
  }
}

void Daemon::expire_fences(double now) {
  for (const auto& [node, state] : agents_.all()) {
    if (state.fenced.empty() || now < state.fence_until) continue;
    AgentState* agent = agents_.find(node);
    const auto ids = std::move(agent->fenced);
    agent->fenced.clear();
    for (JobId id : ids) {
      spdlog::warn("job {}: node {} not back within fence_timeout_s; it ends", id, node);
      engine_.job_ended(id, -SIGKILL);
    }
  }
}

// ---------------------------------------------------------------- journal

void Daemon::save_job(const Job& job) {
  if (!job.allocation.empty()) {
    last_nodes_[job.id] = convert::node_names(job, engine_.cluster());
    store_->save_job(job, last_nodes_[job.id]);
    return;
  }
  // An ended job has given its nodes back; its record keeps where it ran.
  auto it = last_nodes_.find(job.id);
  if (it == last_nodes_.end() || !is_terminal(job.state)) {
    store_->save_job(job, {});
    return;
  }
  Job record = job;
  for (const std::string& name : it->second) {
    if (auto index = engine_.cluster().find(name)) record.allocation.push_back(*index);
  }
  store_->save_job(record, it->second);
  last_nodes_.erase(it);
}

void Daemon::save_nodes() {
  // A drain and the reasons `sched nodes` shows outlive a restart; a node
  // up now is down after one until its agent registers again.
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node& node : engine_.cluster().nodes()) {
    nlohmann::json entry = {
        {"name", node.name}, {"cores", node.cores}, {"drain", node.draining}, {"down", !node.up}};
    if (auto it = node_reasons_.find(node.name); it != node_reasons_.end()) {
      entry["reason"] = it->second;
    }
    nodes.push_back(std::move(entry));
  }
  store_->set_meta(kNodesMeta, nodes.dump());
}

void Daemon::save_partition_states(const Event& event) {
  // Each partition whose state is not its configured one: that state, why,
  // and the configured state it overrides. A restart restores it unless the
  // configuration's state has changed since (then the file says what is
  // wanted now, as a reload applies it).
  auto saved = nlohmann::json::parse(store_->meta(kPartitionsMeta).value_or("{}"), nullptr, false);
  if (!saved.is_object()) saved = nlohmann::json::object();
  for (const auto& configured : config_.partitions) {
    const std::string& name = configured.spec.name;
    const auto index = engine_.partition_index(name);
    if (!index) continue;
    const PartitionState state = engine_.partitions()[static_cast<std::size_t>(*index)].spec.state;
    if (state == configured.spec.state) {
      saved.erase(name);
    } else if (name == event.partition || !saved.contains(name)) {
      saved[name] = {{"state", to_string(state)},
                     {"configured", to_string(configured.spec.state)},
                     {"reason", name == event.partition ? event.message : std::string()}};
    }
  }
  store_->set_meta(kPartitionsMeta, saved.dump());
}

void Daemon::restore_partition_states() {
  const auto saved =
      nlohmann::json::parse(store_->meta(kPartitionsMeta).value_or("{}"), nullptr, false);
  if (!saved.is_object()) return;
  for (const auto& configured : config_.partitions) {
    const auto it = saved.find(configured.spec.name);
    if (it == saved.end() || !it->is_object()) continue;
    const auto state = parse_partition_state(it->value("state", ""));
    const auto was = parse_partition_state(it->value("configured", ""));
    if (!state || was != configured.spec.state) continue;
    const std::string reason = it->value("reason", "");
    (void)engine_.set_partition_state(configured.spec.name, *state,
                                      reason.empty() ? "set before the restart" : reason);
  }
}

void Daemon::save_counters() {
  const std::array<std::uint64_t, 3> counters{submitted_, messages_, bad_messages_};
  if (counters == saved_counters_) return;  // most turns change nothing
  const nlohmann::json json = {
      {"jobs_submitted", submitted_}, {"messages", messages_}, {"bad_messages", bad_messages_}};
  store_->set_meta(kCountersMeta, json.dump());
  saved_counters_ = counters;
}

void Daemon::forget_old_jobs(double now) {
  // Journaled at their end (on_event) and committed by the turn that ended
  // them; show, acct, cancel and the event stream read them from there.
  while (!ended_jobs_.empty() && ended_jobs_.front().first + config_.min_job_age_s <= now) {
    (void)engine_.forget_job(ended_jobs_.front().second);  // gone already: nothing to do
    ended_jobs_.pop_front();
  }
}

void Daemon::on_event(const Event& event) {
  store_->append_event(event);
  const Job* job = is_job_event(event) ? engine_.find_job(event.job) : nullptr;
  // ---- issue 19: the one log line of each event (event_log.hpp)
  if (const auto level = event_log_level(event); spdlog::should_log(level)) {
    spdlog::log(level, "{}", event_log_line(event, job));
  }
  // ---- issue 22: the engine's revert is a version, journaled as it happens
  if (event.type == EventType::PolicyReverted && policy_versions_ && policy_) {
    const auto own = partition_policies_.find(event.partition);
    policy_versions_->note_revert(own != partition_policies_.end() ? *own->second : *policy_,
                                  event.time);
  }
  resizes_.on_event(event);  // ---- issue 17 item 1
  if (job) {
    save_job(*job);
    // ---- issue 15: it stays in memory min_job_age_s (forget_old_jobs)
    if (is_terminal(event.to) && !is_terminal(event.from)) {
      ended_jobs_.emplace_back(event.time, job->id);
    }
    const bool over = is_terminal(job->state) || job->state == JobState::Pending;
    // MTCT is measured anew after an adaptation, as in the simulator.
    if (over || event.type == EventType::JobResized) phases_.erase(job->id);
    // A job that ended by itself in the middle of an adaptation.
    if (over && enactor_.adaptations().under_way(job->id)) {
      enactor_.adaptations().withdraw(job->id, "the job ended");
    }
  }
  if (event.type == EventType::NodeUp || event.type == EventType::NodeDown ||
      event.type == EventType::NodeDrain) {
    save_nodes();
  }
  if (event.type == EventType::PartitionState) save_partition_states(event);
  if (event.type == EventType::PowerCorridor) {
    store_->set_meta(kCorridorMeta, nlohmann::json::array({event.lower_w, event.upper_w}).dump());
  }
  const std::string topic(sched::topic(event.type));
  // ---- issue 19: with its job's name, user, partition, exit code (event_wire.hpp)
  if (http_) http_->on_event(event, job, engine_.partitioned());
  const std::string body = proto::encode_body(published_event(event, job, engine_.partitioned()));
  events_.send(zmq::buffer(topic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  events_.send(zmq::buffer(body), zmq::send_flags::dontwait);
}

// ---- issue 19
void Daemon::reload_config() {
  if (!config_source_) return;
  try {
    const DaemonConfig fresh = config_source_();
    std::vector<std::string> restart;
    auto applied = apply_live_config(config_, fresh, restart);
    reload_partitions(fresh, applied, restart);
    spdlog::info("config=reloaded applied={} restart={}",
                 applied.empty() ? "-" : fmt::format("{}", fmt::join(applied, ",")),
                 restart.empty() ? "-" : fmt::format("{}", fmt::join(restart, ",")));
    if (!restart.empty()) {
      spdlog::warn("config: {} changed; schedd takes that at its next start",
                   fmt::join(restart, ", "));
    }
  } catch (const std::exception& e) {
    spdlog::error("config=refused message={}", log_value(e.what()));
  }
}

// ---- issue 20 item 1: partitions

void Daemon::load_partition_policies(const LuaPolicyOptions& base) {
  for (const auto& p : config_.partitions) {
    if (p.policy.empty()) continue;  // the [scheduler] policy runs its passes
    LuaPolicyOptions options = base;
    options.params = p.params;
    // As the [scheduler] policy: its last deployed version runs again.
    const auto last = store_->last_policy_version(p.spec.name);
    if (last) options.params = version_params(*last);
    auto host = std::make_unique<PolicyHost>(engine_, options, p.spec.name);
    const auto path = last ? std::optional<std::string>(last->path)
                           : resolve_policy_path(p.policy, config_.policy_dir);
    if (last && resolve_policy_path(p.policy, config_.policy_dir) != path) {
      spdlog::warn(
          "partitions.{}.policy names {}, but version {} ({}) runs: after the first start the "
          "last deployed version runs; `sched policy set {} -p {}` deploys the config's",
          p.spec.name, p.policy, last->version, last->path, p.policy, p.spec.name);
    }
    if (!path) {
      throw std::runtime_error("partitions." + p.spec.name + ".policy: no policy " + p.policy +
                               " (neither a file nor " + config_.policy_dir + "/" + p.policy +
                               ".lua)");
    }
    Status loaded = host->load(*path);
    if (!loaded.ok() && last) {
      const std::string copy = policy_versions_->materialize(*last);
      if (copy != *path) loaded = host->load(copy);
    }
    if (loaded.ok()) policy_versions_->note(*host, "schedd", "load", clock_.now());
    if (!loaded.ok()) {
      // Its jobs are not stranded, and the other partitions go on: the
      // [scheduler] policy runs its passes until the file is fixed (then the
      // host's reload installs it).
      const std::string why = "partition " + p.spec.name + ": policy " + *path +
                              " not loaded; the [scheduler] policy runs its passes until it is "
                              "fixed: " +
                              loaded.message();
      spdlog::error("{}", why);
      Event event = policy_error_event(*host->last_failure(), why);
      event.partition = p.spec.name;
      engine_.publish(std::move(event));
    } else {
      spdlog::info("partition {}: policy {}", p.spec.name, host->current()->name());
    }
    partition_policies_[p.spec.name] = std::move(host);
  }
}

void Daemon::reload_partitions(const DaemonConfig& fresh, std::vector<std::string>& applied,
                               std::vector<std::string>& restart) {
  // The partitions themselves (names, nodes, default, policy) are read at
  // start only: a job's partition is fixed for its life.
  const auto& now = config_.partitions;
  const auto& then = fresh.partitions;
  bool same_set = now.size() == then.size();
  for (std::size_t i = 0; same_set && i < now.size(); ++i) {
    same_set = now[i].spec.name == then[i].spec.name && now[i].spec.nodes == then[i].spec.nodes &&
               now[i].spec.is_default == then[i].spec.is_default &&
               now[i].policy == then[i].policy && now[i].params == then[i].params &&
               now[i].negotiation == then[i].negotiation;  // issue 20: read at start only
  }
  if (!same_set) {
    restart.emplace_back("partitions");
    return;
  }
  for (std::size_t i = 0; i < now.size(); ++i) {
    const PartitionSpec& a = now[i].spec;
    const PartitionSpec& b = then[i].spec;
    const PartitionLimits& la = a.limits;
    const PartitionLimits& lb = b.limits;
    if (la.max_time_s != lb.max_time_s || la.default_time_s != lb.default_time_s ||
        la.max_nodes != lb.max_nodes || la.users != lb.users || la.groups != lb.groups) {
      (void)engine_.set_partition_limits(b.name, lb);  // checked by load_config
      applied.emplace_back("partitions." + b.name + " limits");
    }
    if (a.state != b.state) {
      (void)engine_.set_partition_state(b.name, b.state, "config reloaded");
      applied.emplace_back("partitions." + b.name + ".state");
    }
  }
  config_.partitions = then;
}

void Daemon::rebuild_fair_share() {
  // Usage older than 30 half-lives is below 1e-9 of what it was: not read.
  const double half_life = config_.priority.decay_half_life_s;
  AcctQuery query;
  if (half_life > 0) query.since = clock_.now() - 30 * half_life;
  query.limit = 10000;  // pages: the journal may hold millions of jobs
  std::size_t jobs = 0;
  while (true) {
    const std::vector<StoredJob> page = store_->finished_jobs(query);
    for (const StoredJob& stored : page) {
      const Job& job = stored.job;
      if (job.node_seconds > 0) {
        engine_.record_usage(job.spec.user, job.spec.extra->account, job.node_seconds,
                             job.end_time);
        ++jobs;
      }
    }
    if (page.size() < query.limit) break;
    query.after = AcctPosition{page.back().job.end_time, page.back().job.id};
  }
  if (jobs > 0) spdlog::info("fair share: usage of {} ended jobs from the journal", jobs);
}

void Daemon::recover() {
  // Dependencies on jobs that ended before a restart: the journal says how.
  engine_.set_ended_job_lookup([this](JobId id) -> std::optional<JobState> {
    if (auto stored = store_->load_job(id)) return stored->job.state;
    return std::nullopt;
  });
  engine_.skip_ids_through(store_->max_job_id());
  engine_.skip_event_seq_through(store_->last_event_seq());
  // Nodes first (down until their agents register), so that restored jobs
  // find theirs and submissions are checked against the known cluster.
  // Read whole before any node is added: each node event journals the list.
  if (auto saved = store_->meta(kNodesMeta)) {
    const auto nodes = nlohmann::json::parse(*saved, nullptr, false);
    if (nodes.is_array()) {
      for (const auto& node : nodes) {
        const std::string name = node.value("name", "");
        if (name.empty() || engine_.cluster().find(name)) continue;
        const bool drained = node.value("drain", false);
        const std::string reason = node.value("reason", "");
        // Down, or drained, for the same reason as before (a node that was
        // up says why it is down now).
        if ((drained || node.value("down", false)) && !reason.empty()) {
          node_reasons_[name] = reason;
        } else {
          node_reasons_[name] = "waiting for its agent after a restart";
        }
        engine_.add_node(name, node.value("cores", 1));
        // A drained node takes no new work after the restart either.
        if (drained) (void)engine_.set_node_draining(name, true, node_reasons_[name]);
        (void)engine_.set_node_up(name, false, node_reasons_[name]);
      }
    }
  }
  if (auto saved = store_->meta(kCountersMeta)) {
    const auto counters = nlohmann::json::parse(*saved, nullptr, false);
    if (counters.is_object()) {
      submitted_ = counters.value("jobs_submitted", std::uint64_t{0});
      messages_ = counters.value("messages", std::uint64_t{0});
      bad_messages_ = counters.value("bad_messages", std::uint64_t{0});
      saved_counters_ = {submitted_, messages_, bad_messages_};
    }
  }
  rebuild_fair_share();
  int pending = 0;
  int held = 0;
  const double deadline = clock_.now() + config_.down_after_s;
  for (const StoredJob& stored : store_->load_active_jobs()) {
    if (const Status restored = engine_.restore_job(stored.job, stored.nodes); !restored.ok()) {
      spdlog::error("job {} not restored: {}", stored.job.id, restored.message());
      continue;
    }
    // ---- issue 17 item 1: a request's asker is not journaled; the request
    // goes, and resize.expired says so (the application asks again).
    if (stored.job.run->request && engine_.withdraw_resize_request(stored.job.id).ok()) {
      resizes_.dropped_at_restart(stored.job);
    }
    if (stored.job.state == JobState::Pending) {
      ++pending;
    } else {
      ++held;
      awaiting_agent_[stored.job.id] = deadline;
    }
  }
  if (pending + held > 0) {
    spdlog::info("restored {} pending and {} running jobs from the journal", pending, held);
  }
}

}  // namespace sched::daemon

namespace sched::daemon {

// ---- issue 19 items 4, 5
void Daemon::publish_http() {
  if (!http_) return;
  const double now = clock_.now();
  // The figures `sched stats` answers with (handlers/cluster.cpp).
  http::DaemonFigures figures;
  figures.uptime_s = now - started_at_;
  figures.submitted = submitted_;
  figures.messages = messages_;
  figures.bad_messages = bad_messages_;
  http_->publish(engine_, figures, now);
}

// ---- issue 20 items 3, 5: negotiated partitions

void Daemon::start_negotiations() {
  Negotiation::Sinks sinks;
  sinks.event = [this](const std::string& partition, const NegoEvent& event) {
    publish_nego(partition, event);
  };
  sinks.reload = [this](const std::string& partition, bool ok, const std::string& message) {
    Event event;
    event.type = ok ? EventType::PolicyReloaded : EventType::PolicyError;
    event.partition = partition;
    event.message =
        (ok ? "negotiation policy reloaded: " : "negotiation policy not reloaded: ") + message;
    engine_.publish(std::move(event));
  };
  for (const auto& p : config_.partitions) {
    if (!p.negotiation) continue;
    Negotiation::Setup setup;
    setup.partition = p.spec.name;
    setup.config = *p.negotiation;
    // A file, or a name under the policy folder ("negotiation/socket_pack").
    const auto resolve = [&](const std::string& name, const char* key) {
      const std::optional<std::string> path = resolve_policy_path(name, config_.policy_dir);
      if (!path) {
        throw std::runtime_error("partition " + p.spec.name + ": " + key + ": no policy " + name +
                                 " (neither a file nor " + config_.policy_dir + "/" + name +
                                 ".lua)");
      }
      return *path;
    };
    setup.hypervisor_path = resolve(setup.config.hypervisor_policy, "hypervisor_policy");
    if (setup.config.scheduler == "internal") {
      setup.scheduler_path = resolve(setup.config.scheduler_policy, "scheduler_policy");
    }
    setup.endpoint = setup.config.endpoint.empty()
                         ? "ipc://" + config_.state_dir + "/nego-" + p.spec.name + ".sock"
                         : setup.config.endpoint;
    auto n = std::make_unique<Negotiation>(context_, engine_, std::move(setup), sinks);
    if (const Status status = engine_.set_partition_policy(p.spec.name, n->policy());
        !status.ok()) {
      throw std::runtime_error("partition " + p.spec.name + ": " + status.message());
    }
    spdlog::info("partition {}: negotiated, iHypervisor at {} ({} iScheduler)", p.spec.name,
                 n->endpoint(), p.negotiation->scheduler);
    negotiations_.push_back(std::move(n));
  }
}

void Daemon::publish_nego(const std::string& partition, const NegoEvent& event) {
  NegoEventMsg msg;
  msg.event.seq = 0;
  msg.event.time = clock_.now();
  msg.event.topic = event.topic;
  msg.event.partition = partition;
  if (event.job != 0) msg.event.job = event.job;
  if (!event.code.empty()) msg.event.code = event.code;
  if (!event.reason.empty()) msg.event.reason = event.reason;
  if (!event.message.empty()) msg.event.message = event.message;
  msg.txn = event.txn;
  msg.attempt = event.attempt;
  spdlog::debug("event={} partition={} txn={} attempt={} job={} code={} reason={} message={}",
                event.topic, partition, event.txn, event.attempt, event.job, log_value(event.code),
                log_value(event.reason), log_value(event.message));
  if (http_) http_->on_nego_event(partition, event.topic);
  const std::string body = proto::encode_body(msg);
  events_.send(zmq::buffer(event.topic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  events_.send(zmq::buffer(body), zmq::send_flags::dontwait);
}

}  // namespace sched::daemon
