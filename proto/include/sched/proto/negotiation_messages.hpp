// The negotiation protocol between an iScheduler and an iHypervisor (issue
// 20, docs/negotiation.md): message type names and bodies. Every message is a
// one-way request in sched's envelope; the paper's RESPONSE_… messages are
// messages of their own. Not in messages.hpp: schedd's own sockets do not
// speak it, the negotiation library and its peers do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kNegoInit = "nego.init";                           // S → H
inline constexpr std::string_view kNegoInitResponse = "nego.init_response";          // H → S
inline constexpr std::string_view kNegoFinalize = "nego.finalize";                   // either
inline constexpr std::string_view kNegoFinalizeResponse = "nego.finalize_response";  // either
inline constexpr std::string_view kNegoRequestOffer = "nego.request_offer";          // S → H
inline constexpr std::string_view kNegoOffer = "nego.offer";                         // H → S
inline constexpr std::string_view kNegoStart = "nego.start";                         // S → H
inline constexpr std::string_view kNegoStartResponse = "nego.start_response";        // H → S
inline constexpr std::string_view kNegoOfferResponse = "nego.offer_response";        // S → H
inline constexpr std::string_view kNegoEnd = "nego.end";                             // either
inline constexpr std::string_view kNegoEndResponse = "nego.end_response";            // either
inline constexpr std::string_view kNegoStatus = "nego.status";                       // H → S
inline constexpr std::string_view kNegoUrgent = "nego.urgent";                       // S → H
inline constexpr std::string_view kNegoUrgentResponse = "nego.urgent_response";      // H → S
}  // namespace type

// Error codes of the negotiation protocol beyond the envelope's own
// (docs/negotiation.md §3).
namespace nego_code {
inline constexpr std::string_view kWrongRole = "wrong_role";
inline constexpr std::string_view kNotInitialised = "not_initialised";
inline constexpr std::string_view kOutOfOrder = "out_of_order";
inline constexpr std::string_view kUnknownTransaction = "unknown_transaction";
inline constexpr std::string_view kAttemptLimit = "attempt_limit";
}  // namespace nego_code

inline constexpr int kNegotiationVersion = 1;

// Cores of one node, by socket (hwloc logical indexes).
struct NegoSocket {
  int socket = 0;
  std::vector<int> cores;
  template <class V>
  void fields(V& v) {
    v("socket", socket);
    v("cores", cores);
  }
};

struct NegoResource {
  std::string node;
  std::vector<NegoSocket> sockets;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("sockets", sockets);
  }
};

struct NegoOfferSet {
  std::int64_t offer = 0;  // H's id, unique in the session
  bool is_virtual = false;
  std::vector<NegoResource> resources;
  template <class V>
  void fields(V& v) {
    v("offer", offer);
    v("virtual", is_virtual);
    v("resources", resources);
  }
};

// Cores of one node given to one job.
struct NegoPlacement {
  std::int64_t job = 0;
  std::string node;
  std::vector<int> cores;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("node", node);
    v("cores", cores);
  }
  friend bool operator==(const NegoPlacement&, const NegoPlacement&) = default;
};

struct NegoInit {
  int version = kNegotiationVersion;
  int max_attempts = 3;
  double timeout_s = 10;
  double status_interval_s = 0;
  std::string name;
  template <class V>
  void fields(V& v) {
    v("version", version);
    v("max_attempts", max_attempts);
    v("timeout_s", timeout_s);
    v("status_interval_s", status_interval_s);
    v("name", name);
  }
};

struct NegoInitResponse {
  int version = kNegotiationVersion;
  int max_attempts = 3;
  double timeout_s = 10;
  double status_interval_s = 0;
  std::vector<std::int64_t> running;
  template <class V>
  void fields(V& v) {
    v("version", version);
    v("max_attempts", max_attempts);
    v("timeout_s", timeout_s);
    v("status_interval_s", status_interval_s);
    v("running", running);
  }
};

struct NegoFinalize {
  std::string reason;
  template <class V>
  void fields(V& v) {
    v("reason", reason);
  }
};

struct NegoEmpty {
  template <class V>
  void fields(V&) {}
};

struct NegoRequestOffer {
  std::int64_t pending = 0;
  template <class V>
  void fields(V& v) {
    v("pending", pending);
  }
};

struct NegoOffer {
  std::int64_t txn = 0;
  int attempt = 1;
  NegoOfferSet offer;
  std::string reason;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
    v("attempt", attempt);
    v("offer", offer);
    v("reason", reason);
  }
};

struct NegoStart {
  std::int64_t txn = 0;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
  }
};

struct NegoStartResponse {
  std::int64_t txn = 0;
  bool accepted = true;
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
    v("accepted", accepted);
    v("reason", reason);
  }
};

struct NegoOfferResponse {
  std::int64_t txn = 0;
  int attempt = 1;
  bool accepted = true;
  std::vector<NegoPlacement> mapping;
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
    v("attempt", attempt);
    v("accepted", accepted);
    v("mapping", mapping);
    v("reason", reason);
  }
};

namespace nego_outcome {
inline constexpr std::string_view kAgreed = "agreed";        // H only
inline constexpr std::string_view kDeclined = "declined";    // S only, on a first offer
inline constexpr std::string_view kAbandoned = "abandoned";  // either
}  // namespace nego_outcome

struct NegoEnd {
  std::int64_t txn = 0;
  std::string outcome;
  std::vector<NegoPlacement> mapping;
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
    v("outcome", outcome);
    v("mapping", mapping);
    v("reason", reason);
  }
};

struct NegoEndResponse {
  std::int64_t txn = 0;
  template <class V>
  void fields(V& v) {
    v("txn", txn);
  }
};

struct NegoJobStatus {
  std::int64_t job = 0;
  std::string state;
  int cores = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("state", state);
    v("cores", cores);
  }
};

struct NegoStatus {
  double time = 0;
  int cores_total = 0;
  int cores_busy = 0;
  double utilisation = 0;
  double throughput_per_hour = 0;
  double mean_wait_s = 0;
  std::vector<NegoJobStatus> jobs;
  template <class V>
  void fields(V& v) {
    v("time", time);
    v("cores_total", cores_total);
    v("cores_busy", cores_busy);
    v("utilisation", utilisation);
    v("throughput_per_hour", throughput_per_hour);
    v("mean_wait_s", mean_wait_s);
    v("jobs", jobs);
  }
};

struct NegoUrgent {
  std::int64_t job = 0;
  int cores = 1;
  int nodes = 0;  // at most this many nodes; 0: any
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("cores", cores);
    v("nodes", nodes);
  }
};

struct NegoVictim {
  std::int64_t job = 0;
  std::string action;  // "shrunk" or "suspended"
  int cores = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("action", action);
    v("cores", cores);
  }
};

struct NegoUrgentResponse {
  std::int64_t job = 0;
  bool started = false;
  std::vector<NegoPlacement> placement;
  std::vector<NegoVictim> victims;
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("started", started);
    v("placement", placement);
    v("victims", victims);
    v("reason", reason);
  }
};

}  // namespace sched::proto
