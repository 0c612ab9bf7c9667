// One process's use of the library: what sched_mall* stands for. Its methods
// follow the C API (malleable.h) and throw Failure where that returns an
// error code.
#pragma once

#include <cstddef>
#include <optional>
#include <zmq.hpp>

#include "agent_link.hpp"
#include "exchange.hpp"
#include "rendezvous.hpp"
#include "sched/malleable.h"
#include "step_env.hpp"

namespace sched::mall {

class Session {
 public:
  // Reads the environment, binds the data socket, sends proc.init and
  // publishes the endpoint in the rendezvous folder (when there is one).
  Session();

  int rank() const { return rank_; }
  int size() const { return size_; }
  sched_mall_status status() const { return status_; }

  bool probe();
  sched_mall_adaptation adapt_begin();
  void adapt_commit();

  void report_phase(double comm_seconds, double compute_seconds);
  void send(int to, const void* data, std::size_t size);
  zmq::message_t recv(int from);

  // proc.finalize; the sockets close when the session is destroyed.
  void finalize();

 private:
  void check_rank(int rank, const char* what) const;

  StepEnv env_;
  zmq::context_t context_;  // declared first: outlives the sockets below
  Exchange exchange_;
  AgentLink agent_;
  std::optional<Rendezvous> rendezvous_;
  int rank_;
  int size_;
  sched_mall_status status_ = SCHED_MALL_EXISTING;
};

}  // namespace sched::mall
