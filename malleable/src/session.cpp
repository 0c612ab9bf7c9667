#include "session.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <utility>

#include "failure.hpp"
#include "sched/proto/process_messages.hpp"

namespace sched::mall {

Session::Session()
    : env_(read_step_env()),
      context_(1),
      exchange_(context_, env_.rank, env_.bind_endpoint, env_.timeout),
      agent_(context_, env_.agent_endpoint, env_.timeout),
      rank_(env_.rank),
      size_(env_.size) {
  agent_.on_notice([this](const proto::Envelope& notice) { on_notice(notice); });
  if (env_.rendezvous_dir) {
    rendezvous_.emplace(*env_.rendezvous_dir, env_.job, env_.step);
    exchange_.set_resolver([this](int rank) { return rendezvous_->lookup(rank, env_.timeout); });
  } else {
    exchange_.set_resolver([](int rank) -> std::string {
      throw Failure(SCHED_MALL_ENOPEER,
                    "the endpoint of rank " + std::to_string(rank) +
                        " is not known: set SCHED_MALL_RENDEZVOUS_DIR to a folder all ranks see");
    });
  }
  proto::ProcInit init;
  init.job = env_.job;
  init.step = env_.step;
  init.rank = env_.rank;
  init.pid = ::getpid();
  init.endpoint = exchange_.endpoint();
  const auto reply = agent_.call<proto::ProcInitReply>(proto::type::kProcInit, init);
  if (reply.status == "new") {
    status_ = SCHED_MALL_NEW;
  } else if (reply.status != "existing") {
    throw Failure(SCHED_MALL_EPROTO, "the node agent answered proc.init with status '" +
                                         reply.status + "' (expected existing or new)");
  }
  // The agent knows the step's size best; an older one may answer 0.
  if (reply.size > 0) size_ = reply.size;
  if (rank_ >= size_) {
    throw Failure(SCHED_MALL_EPROTO, "the node agent says the step has " + std::to_string(size_) +
                                         " processes, but this is rank " + std::to_string(rank_));
  }
  // A new process learns its peers from the adaptation, and its rank's file
  // would stand for a process set that does not exist yet.
  if (rendezvous_ && status_ == SCHED_MALL_EXISTING)
    rendezvous_->publish(rank_, exchange_.endpoint());
}

void Session::on_notice(const proto::Envelope& notice) {
  if (notice.type == proto::type::kProcResizeAnswer) {
    try {
      const auto answer = notice.body_as<proto::ResizeAnswer>();
      const auto it = request_numbers_.find(answer.request);
      if (answer.job != env_.job || it == request_numbers_.end()) return;
      requests_[static_cast<std::size_t>(it->second - 1)] = answer;
      request_numbers_.erase(it);
    } catch (const proto::ProtoError&) {
      // An answer this library cannot read: the request stays pending.
    }
    return;
  }
  try {
    const auto body = notice.body_as<proto::ProcAdaptNotice>();
    if (body.job != env_.job) return;
    if (notice.type == proto::type::kProcAdaptPending) {
      pending_ = body.adaptation;
      withdrawn_ = false;
    } else if (notice.type == proto::type::kProcAdaptAbort && pending_ == body.adaptation) {
      pending_.reset();
      withdrawn_ = true;
    }
  } catch (const proto::ProtoError&) {
    // Not a notice this library knows: nothing to do with it.
  }
}

bool Session::probe() {
  if (window_) return false;  // in the window already
  agent_.poll();
  return pending_.has_value() || status_ == SCHED_MALL_NEW;
}

namespace {

// Data epochs: 0 for the step's first set; adaptation k's window is 2k-1 and
// the set after it 2k, so that ranks of different sets never mix.
std::uint32_t window_epoch(std::uint64_t adaptation) {
  return static_cast<std::uint32_t>(2 * adaptation - 1);
}

}  // namespace

bool Session::probe_all() {
  if (left_) throw Failure(SCHED_MALL_EINVAL, "this process left the job at its last adaptation");
  if (window_ || status_ == SCHED_MALL_NEW) {
    throw Failure(SCHED_MALL_EINVAL,
                  "probe_all is for the processes of the current set outside a window");
  }
  const auto started = std::chrono::steady_clock::now();
  const bool mine = probe();
  bool any = mine;
  const unsigned char byte = mine ? 1 : 0;
  if (size_ > 1) {
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r) {
        const zmq::message_t answer = exchange_.recv_control(r);
        any = any || (answer.size() == 1 && *answer.data<unsigned char>() != 0);
      }
      const unsigned char decision = any ? 1 : 0;
      for (int r = 1; r < size_; ++r) exchange_.send_control(r, &decision, 1);
    } else {
      exchange_.send_control(0, &byte, 1);
      const zmq::message_t decision = exchange_.recv_control(0);
      any = decision.size() == 1 && *decision.data<unsigned char>() != 0;
    }
  }
  // Told yes before this process's own notice came: wait for it (or for its
  // withdrawal, which adapt_begin then reports as SCHED_MALL_EABORTED).
  while (any && !pending_ && !withdrawn_) {
    if (std::chrono::steady_clock::now() - started > env_.timeout) {
      throw Failure(SCHED_MALL_ETIMEDOUT,
                    "another process saw an adaptation this one was not told of within " +
                        std::to_string(env_.timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    agent_.poll();
  }
  return any;
}

sched_mall_adaptation Session::adapt_begin() {
  if (left_) throw Failure(SCHED_MALL_EINVAL, "this process left the job at its last adaptation");
  if (window_) throw Failure(SCHED_MALL_EINVAL, "adapt_begin again before adapt_commit");
  if (!probe()) {
    if (std::exchange(withdrawn_, false)) {
      throw Failure(SCHED_MALL_EABORTED, "the adaptation was withdrawn before this process came");
    }
    throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation is pending");
  }
  proto::ProcAdaptBegin request;
  request.job = env_.job;
  request.step = env_.step;
  request.rank = rank_;
  proto::ProcAdaptBeginReply plan;
  try {
    // Waits for every process of the job to enter (the scheduler's timeout
    // ends a window that never opens).
    plan = agent_.call<proto::ProcAdaptBeginReply>(proto::type::kProcAdaptBegin, request);
  } catch (const Failure& e) {
    if (e.code() == SCHED_MALL_EABORTED) pending_.reset();
    throw;
  }
  const int window = static_cast<int>(plan.old_ranks.size());
  if (window == 0 || plan.new_ranks.size() != plan.old_ranks.size() ||
      plan.endpoints.size() != plan.old_ranks.size() || plan.window_rank < 0 ||
      plan.window_rank >= window) {
    throw Failure(SCHED_MALL_EPROTO, "the node agent's adaptation plan is inconsistent");
  }
  pending_.reset();
  if (plan.new_cores) job_cores_ = *plan.new_cores;  // a resize by cores (issue 20 item 2)
  if (plan.node_cores) node_cores_ = *plan.node_cores;
  std::map<int, std::string> peers;
  for (int w = 0; w < window; ++w) peers[w] = plan.endpoints[static_cast<std::size_t>(w)];
  exchange_.reset(window_epoch(plan.adaptation), plan.window_rank, peers);
  Window opened;
  opened.adaptation = plan.adaptation;
  opened.rank = plan.window_rank;
  opened.plan = std::move(plan);
  window_ = std::move(opened);
  const auto w = static_cast<std::size_t>(window_->rank);
  sched_mall_adaptation out{};
  out.old_size = window_->plan.old_size;
  out.new_size = window_->plan.new_size;
  out.old_rank = window_->plan.old_ranks[w];
  out.new_rank = window_->plan.new_ranks[w];
  out.leaving = out.new_rank < 0 ? 1 : 0;
  return out;
}

int Session::adapt_window_rank(int new_rank) const {
  if (!window_) throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation window is open");
  const auto& ranks = window_->plan.new_ranks;
  for (std::size_t w = 0; w < ranks.size(); ++w) {
    if (ranks[w] == new_rank) return static_cast<int>(w);
  }
  throw Failure(SCHED_MALL_EINVAL, "new rank " + std::to_string(new_rank) + " is not one of 0.." +
                                       std::to_string(window_->plan.new_size - 1));
}

const std::string* Session::adapt_host(int window_rank) const {
  if (!window_) throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation window is open");
  const auto window = static_cast<int>(window_->plan.old_ranks.size());
  if (window_rank < 0 || window_rank >= window) {
    throw Failure(SCHED_MALL_EINVAL, "window rank " + std::to_string(window_rank) +
                                         " is not one of 0.." + std::to_string(window - 1));
  }
  const auto& hosts = window_->plan.hosts;
  if (!hosts || hosts->size() != window_->plan.old_ranks.size()) return nullptr;
  return &(*hosts)[static_cast<std::size_t>(window_rank)];
}

void Session::adapt_set_endpoint(int window_rank, const std::string& endpoint) {
  (void)adapt_host(window_rank);  // the same checks
  window_->plan.endpoints[static_cast<std::size_t>(window_rank)] = endpoint;
  exchange_.set_peer(window_rank, endpoint);
}

void Session::adapt_commit() {
  if (!window_) throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation has begun");
  proto::ProcAdaptCommit commit;
  commit.job = env_.job;
  commit.adaptation = window_->adaptation;
  commit.window_rank = window_->rank;
  (void)agent_.call<proto::Empty>(proto::type::kProcAdaptCommit, commit);
  const auto& plan = window_->plan;
  const int new_rank = plan.new_ranks[static_cast<std::size_t>(window_->rank)];
  std::map<int, std::string> peers;
  for (std::size_t w = 0; w < plan.new_ranks.size(); ++w) {
    if (plan.new_ranks[w] >= 0) peers[plan.new_ranks[w]] = plan.endpoints[w];
  }
  exchange_.reset(window_epoch(window_->adaptation) + 1, std::max(new_rank, 0), peers);
  if (new_rank < 0) {
    left_ = true;
  } else {
    rank_ = new_rank;
  }
  size_ = plan.new_size;
  status_ = SCHED_MALL_EXISTING;
  window_.reset();
}

int Session::peers() const {
  return window_ ? static_cast<int>(window_->plan.old_ranks.size()) : size_;
}

int Session::request(int op, int nodes, const char* reason) {
  if (left_) throw Failure(SCHED_MALL_EINVAL, "this process left the job at its last adaptation");
  if (op != SCHED_MALL_GROW && op != SCHED_MALL_SHRINK) {
    throw Failure(SCHED_MALL_EINVAL, "request: op " + std::to_string(op) +
                                         " is not SCHED_MALL_GROW or SCHED_MALL_SHRINK");
  }
  if (nodes < 1) {
    throw Failure(SCHED_MALL_EINVAL,
                  "request: " + std::to_string(nodes) + " nodes (at least 1 is needed)");
  }
  if (!request_timeout_s_) {
    request_timeout_s_ = 0;  // schedd's default
    if (const char* text = std::getenv("SCHED_MALL_REQUEST_TIMEOUT_S"); text && *text) {
      char* end = nullptr;
      const double value = std::strtod(text, &end);
      if (*end != '\0' || !std::isfinite(value) || value <= 0) {
        request_timeout_s_.reset();
        throw Failure(SCHED_MALL_EENV, std::string("SCHED_MALL_REQUEST_TIMEOUT_S='") + text +
                                           "' is not a number of seconds above 0");
      }
      request_timeout_s_ = value;
    }
  }
  proto::ProcResize body;
  body.job = env_.job;
  body.op = op == SCHED_MALL_GROW ? "grow" : "shrink";
  body.nodes = nodes;
  body.reason = reason ? reason : "";
  body.timeout_s = *request_timeout_s_;
  // Answered once schedd took the request (or refused it): one round trip.
  auto answer = agent_.call<proto::ResizeAnswer>(proto::type::kProcResize, body);
  requests_.push_back(std::move(answer));
  const int number = static_cast<int>(requests_.size());
  if (requests_.back().state == "pending") request_numbers_[requests_.back().request] = number;
  return number;
}

const proto::ResizeAnswer& Session::request_status(int request) {
  if (request < 1 || request > static_cast<int>(requests_.size())) {
    throw Failure(SCHED_MALL_EINVAL, "request_status: " + std::to_string(request) +
                                         " is not a request of this process");
  }
  agent_.poll();  // answers that came meanwhile
  return requests_[static_cast<std::size_t>(request - 1)];
}

void Session::report_phase(double comm_seconds, double compute_seconds) {
  if (!std::isfinite(comm_seconds) || !std::isfinite(compute_seconds) || comm_seconds < 0 ||
      compute_seconds < 0) {
    throw Failure(SCHED_MALL_EINVAL, "phase times must be finite and not negative (comm " +
                                         std::to_string(comm_seconds) + " s, compute " +
                                         std::to_string(compute_seconds) + " s)");
  }
  proto::ProcPhase phase;
  phase.job = env_.job;
  phase.rank = rank_;
  phase.comm_s = comm_seconds;
  phase.compute_s = compute_seconds;
  agent_.notify(proto::type::kProcPhase, phase);
}

void Session::check_rank(int rank, const char* what) const {
  if (left_) throw Failure(SCHED_MALL_EINVAL, "this process left the job at its last adaptation");
  if (rank < 0 || rank >= peers()) {
    throw Failure(SCHED_MALL_EINVAL, std::string(what) + " rank " + std::to_string(rank) +
                                         " is not one of 0.." + std::to_string(peers() - 1));
  }
}

void Session::send(int to, const void* data, std::size_t size) {
  check_rank(to, "send: destination");
  if (!data && size > 0)
    throw Failure(SCHED_MALL_EINVAL,
                  "send: no data for a message of " + std::to_string(size) + " bytes");
  exchange_.send(to, data, size);
}

zmq::message_t Session::recv(int from) {
  check_rank(from, "recv: source");
  return exchange_.recv(from);
}

void Session::finalize() {
  proto::ProcFinalize body;
  body.job = env_.job;
  body.rank = rank_;
  (void)agent_.call<proto::Empty>(proto::type::kProcFinalize, body);
}

}  // namespace sched::mall
