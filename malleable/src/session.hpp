// One process's use of the library: what sched_mall* stands for. Its methods
// follow the C API (malleable.h) and throw Failure where that returns an
// error code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>
#include <zmq.hpp>

#include "agent_link.hpp"
#include "exchange.hpp"
#include "rendezvous.hpp"
#include "sched/malleable.h"
#include "sched/proto/process_messages.hpp"
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
  // A resize by cores: the job's cores here and in all since adapt_begin (0: none yet).
  int node_cores() const { return node_cores_; }
  int job_cores() const { return job_cores_; }

  bool probe();
  bool probe_all();
  sched_mall_adaptation adapt_begin();
  int adapt_window_rank(int new_rank) const;
  // MPI expansions: the node of a window rank (null: not said); this
  // process's endpoint; a spawned process's endpoint, learnt late.
  const std::string* adapt_host(int window_rank) const;
  const std::string& endpoint() const { return exchange_.endpoint(); }
  void adapt_set_endpoint(int window_rank, const std::string& endpoint);
  void adapt_commit();

  // Evolving requests: the handle's number for the request, and its answer
  // so far (state "pending", "granted", "refused" or "expired").
  int request(int op, int nodes, const char* reason);
  const proto::ResizeAnswer& request_status(int request);

  void report_phase(double comm_seconds, double compute_seconds);
  void send(int to, const void* data, std::size_t size);
  zmq::message_t recv(int from);

  // proc.finalize; the sockets close when the session is destroyed.
  void finalize();

 private:
  void check_rank(int rank, const char* what) const;
  void on_notice(const proto::Envelope& notice);
  // The number of processes send/recv may name now (the window's, in one).
  int peers() const;

  // An adaptation window from adapt_begin to adapt_commit.
  struct Window {
    std::uint64_t adaptation = 0;
    int rank = 0;  // this process's window rank
    proto::ProcAdaptBeginReply plan;
  };

  StepEnv env_;
  zmq::context_t context_;  // declared first: outlives the sockets below
  Exchange exchange_;
  AgentLink agent_;
  std::optional<Rendezvous> rendezvous_;
  int rank_;
  int size_;
  sched_mall_status status_ = SCHED_MALL_EXISTING;
  std::optional<std::uint64_t> pending_;  // an adaptation the agent announced
  bool withdrawn_ = false;                // one announced was withdrawn since
  std::optional<Window> window_;
  bool left_ = false;  // committed as a leaving process
  int node_cores_ = 0;
  int job_cores_ = 0;
  // Requests by this handle's number (index + 1); schedd's id → number.
  std::vector<proto::ResizeAnswer> requests_;
  std::map<std::uint64_t, int> request_numbers_;
  std::optional<double> request_timeout_s_;  // SCHED_MALL_REQUEST_TIMEOUT_S
};

}  // namespace sched::mall
