#include "session.hpp"

#include <unistd.h>

#include <cmath>

#include "failure.hpp"
#include "sched/proto/messages.hpp"

namespace sched::mall {

Session::Session()
    : env_(read_step_env()),
      context_(1),
      exchange_(context_, env_.rank, env_.bind_endpoint, env_.timeout),
      agent_(context_, env_.agent_endpoint, env_.timeout),
      rank_(env_.rank),
      size_(env_.size) {
  // Local set-up first: when it fails, the agent has not heard of us.
  if (env_.rendezvous_dir) {
    rendezvous_.emplace(*env_.rendezvous_dir, env_.job, env_.step);
    rendezvous_->publish(rank_, exchange_.endpoint());
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
}

bool Session::probe() {
  // The adaptation protocol will read the agent's notices here.
  return false;
}

sched_mall_adaptation Session::adapt_begin() {
  throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation is pending");
}

void Session::adapt_commit() { throw Failure(SCHED_MALL_ENOTPENDING, "no adaptation has begun"); }

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
  if (rank < 0 || rank >= size_) {
    throw Failure(SCHED_MALL_EINVAL, std::string(what) + " rank " + std::to_string(rank) +
                                         " is not one of 0.." + std::to_string(size_ - 1));
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
