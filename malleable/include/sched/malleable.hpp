// C++ face of the malleability library (malleable.h says what each call
// does; this header only adds RAII and exceptions, and needs C++20).
//
//   sched::mall::Process process;            // init; throws sched::mall::Error
//   sched::mall::PhaseTimer timer(process);
//   for (...) {
//     timer.start_compute();  ...
//     timer.start_comm();     process.send(peer, bytes); auto in = process.recv(peer);
//     timer.report();                        // one proc.phase
//     if (process.probe()) { ... }
//   }                                        // finalize in the destructor
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sched/malleable.h"

namespace sched::mall {

// A failed call: code() is the SCHED_MALL_E* result, what() its message.
class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

enum class Status { Existing = SCHED_MALL_EXISTING, New = SCHED_MALL_NEW };

using Adaptation = sched_mall_adaptation;

// This process's handle: sched_mall_init in the constructor, finalize in the
// destructor (or earlier, with finalize()). Movable, not copyable.
class Process {
 public:
  Process();
  ~Process();
  Process(Process&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), status_(other.status_) {}
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int rank() const { return sched_mall_rank(handle_); }
  int size() const { return sched_mall_size(handle_); }
  Status status() const { return status_; }

  // Is an adaptation waiting (or is this a new process)?
  bool probe();
  // The same answer on every process of the set (collective).
  bool probe_all();
  // Throws Error(SCHED_MALL_ENOTPENDING) when none is pending, and
  // Error(SCHED_MALL_EABORTED) when it was rolled back.
  Adaptation adapt_begin();
  // In the window: the window rank of the process with new rank new_rank.
  int adapt_window_rank(int new_rank) const;
  void adapt_commit();

  // Evolving requests (malleable.h): the request's number, and where it
  // stands (its strings copied).
  struct RequestStatus {
    sched_mall_request_state state = SCHED_MALL_REQUEST_PENDING;
    int nodes = 0;
    std::string code;
    std::string message;
  };
  int request_grow(int nodes, const std::string& reason = {}) {
    return request(SCHED_MALL_GROW, nodes, reason);
  }
  int request_shrink(int nodes, const std::string& reason = {}) {
    return request(SCHED_MALL_SHRINK, nodes, reason);
  }
  RequestStatus request_status(int request);

  void report_phase(double comm_seconds, double compute_seconds);
  void send(int to_rank, std::span<const std::byte> data);
  std::vector<std::byte> recv(int from_rank);

  // Ends the process's part now; throws when proc.finalize failed. The
  // handle is closed either way, and the destructor does nothing more.
  void finalize();

  sched_mall* handle() const { return handle_; }

 private:
  int request(int op, int nodes, const std::string& reason);
  void check(int result) const {
    if (result != SCHED_MALL_OK) throw Error(result, sched_mall_error(handle_));
  }

  sched_mall* handle_ = nullptr;
  Status status_ = Status::Existing;
};

// Splits wall time into communication and computation for report_phase:
// each start_*() ends the running interval and starts one of that kind;
// report() ends the phase, sends its sums and stops the timer until the next
// start_*(). Clock is a parameter so that tests can drive time.
template <class Clock = std::chrono::steady_clock>
class BasicPhaseTimer {
 public:
  struct Phase {
    double comm_seconds = 0;
    double compute_seconds = 0;
  };

  explicit BasicPhaseTimer(Process& process) : process_(process) {}

  void start_comm() { switch_to(Mode::Comm); }
  void start_compute() { switch_to(Mode::Compute); }
  // Ends the running interval without starting another.
  void stop() { switch_to(Mode::Idle); }

  // The sums so far in this phase, the running interval included.
  Phase current() const;
  // Stops, reports the phase to the agent and starts a new, empty one;
  // returns what it reported. When reporting throws, the sums are kept.
  Phase report();

 private:
  enum class Mode { Idle, Comm, Compute };
  void switch_to(Mode mode);

  Process& process_;
  Mode mode_ = Mode::Idle;
  typename Clock::time_point since_{};
  typename Clock::duration comm_{};
  typename Clock::duration compute_{};
};

using PhaseTimer = BasicPhaseTimer<>;

// ---------------------------------------------------------------- inline part

inline Process::Process() {
  sched_mall_status status = SCHED_MALL_EXISTING;
  const int result = sched_mall_init(&handle_, &status);
  if (result != SCHED_MALL_OK) throw Error(result, sched_mall_last_init_error());
  status_ = static_cast<Status>(status);
}

inline Process::~Process() {
  if (handle_) sched_mall_finalize(handle_);  // a failure here has nobody to tell
}

inline Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    if (handle_) sched_mall_finalize(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    status_ = other.status_;
  }
  return *this;
}

inline bool Process::probe() {
  int pending = 0;
  check(sched_mall_probe(handle_, &pending));
  return pending != 0;
}

inline bool Process::probe_all() {
  int pending = 0;
  check(sched_mall_probe_all(handle_, &pending));
  return pending != 0;
}

inline Adaptation Process::adapt_begin() {
  Adaptation adaptation{};
  check(sched_mall_adapt_begin(handle_, &adaptation));
  return adaptation;
}

inline int Process::adapt_window_rank(int new_rank) const {
  int window_rank = -1;
  check(sched_mall_adapt_window_rank(handle_, new_rank, &window_rank));
  return window_rank;
}

inline void Process::adapt_commit() { check(sched_mall_adapt_commit(handle_)); }

inline int Process::request(int op, int nodes, const std::string& reason) {
  int number = 0;
  check(sched_mall_request(handle_, op, nodes, reason.c_str(), &number));
  return number;
}

inline Process::RequestStatus Process::request_status(int request) {
  sched_mall_request_info info{};
  check(sched_mall_request_status(handle_, request, &info));
  return RequestStatus{info.state, info.nodes, info.code, info.message};
}

inline void Process::report_phase(double comm_seconds, double compute_seconds) {
  check(sched_mall_report_phase(handle_, comm_seconds, compute_seconds));
}

inline void Process::send(int to_rank, std::span<const std::byte> data) {
  check(sched_mall_send(handle_, to_rank, data.data(), data.size()));
}

inline std::vector<std::byte> Process::recv(int from_rank) {
  void* data = nullptr;
  std::size_t size = 0;
  check(sched_mall_recv(handle_, from_rank, &data, &size));
  const auto* bytes = static_cast<const std::byte*>(data);
  std::vector<std::byte> out;
  try {
    out.assign(bytes, bytes + size);
  } catch (...) {
    sched_mall_free(data);
    throw;
  }
  sched_mall_free(data);
  return out;
}

inline void Process::finalize() {
  if (!handle_) return;
  const int result = sched_mall_finalize(std::exchange(handle_, nullptr));
  if (result != SCHED_MALL_OK) throw Error(result, sched_mall_last_init_error());
}

template <class Clock>
void BasicPhaseTimer<Clock>::switch_to(Mode mode) {
  const auto now = Clock::now();
  if (mode_ == Mode::Comm) comm_ += now - since_;
  if (mode_ == Mode::Compute) compute_ += now - since_;
  mode_ = mode;
  since_ = now;
}

template <class Clock>
typename BasicPhaseTimer<Clock>::Phase BasicPhaseTimer<Clock>::current() const {
  using Seconds = std::chrono::duration<double>;
  auto comm = comm_;
  auto compute = compute_;
  const auto running = Clock::now() - since_;
  if (mode_ == Mode::Comm) comm += running;
  if (mode_ == Mode::Compute) compute += running;
  return Phase{Seconds(comm).count(), Seconds(compute).count()};
}

template <class Clock>
typename BasicPhaseTimer<Clock>::Phase BasicPhaseTimer<Clock>::report() {
  stop();
  const Phase phase = current();
  process_.report_phase(phase.comm_seconds, phase.compute_seconds);  // on failure, keeps the sums
  comm_ = {};
  compute_ = {};
  return phase;
}

}  // namespace sched::mall
