// `sched negotiation` (issue 20 item 5; docs/protocol.md "negotiation.info"):
// the negotiated partitions, each with its peer's state, the transaction in
// flight and the statistics of its negotiation. A file of its own so that
// the many users of client_messages.hpp are not rebuilt for it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/proto/negotiation_messages.hpp"

namespace sched::proto {

namespace type {
// Body: NegotiationQuery; reply: NegotiationList.
inline constexpr std::string_view kNegotiationInfo = "negotiation.info";
}  // namespace type

struct NegotiationQuery {
  std::optional<std::string> partition;  // absent: every negotiated partition
  template <class V>
  void fields(V& v) {
    v("partition", partition);
  }
};

struct NegotiationInfo {
  std::string partition;
  std::string endpoint;           // where the iHypervisor listens
  std::string scheduler;          // "internal" or "external"
  std::string hypervisor_policy;  // policy names (their `name`, else the file's)
  std::string scheduler_policy;   // "" for an external iScheduler
  std::string peer;               // the session: uninitialised, initialising, ready, finalizing
  std::string phase;              // the open transaction's phase; "none" when none is open
  std::int64_t txn = 0;           // the open transaction (0: none)
  int attempt = 0;                // its offer's attempt
  int offer_cores = 0;            // cores in its open offer
  int max_attempts = 0;           // agreed at PROTOCOL_INIT
  double timeout_s = 0;
  double status_interval_s = 0;
  int queued = 0;    // jobs the internal iScheduler holds, waiting for an offer
  int starting = 0;  // agreed jobs not yet started by the engine
  int cores_total = 0;
  int cores_busy = 0;
  std::int64_t transactions = 0;
  std::int64_t agreed = 0;        // with jobs in the mapping
  std::int64_t agreed_empty = 0;  // agreed on an empty mapping
  std::int64_t not_agreed = 0;
  std::int64_t rejected_mappings = 0;
  std::int64_t rejected_offers = 0;  // by the internal iScheduler
  std::int64_t start_refusals = 0;   // agreed starts the engine refused
  double mean_rounds = 0;            // offers per agreement with jobs
  int max_rounds = 0;
  std::int64_t policy_errors = 0;  // both sides
  std::optional<std::string> last_policy_error;
  std::map<std::string, std::int64_t> messages;  // by type, both directions
  std::optional<NegoStatus> last_status;         // the last STATUS_REPORT sent
  template <class V>
  void fields(V& v) {
    v("partition", partition);
    v("endpoint", endpoint);
    v("scheduler", scheduler);
    v("hypervisor_policy", hypervisor_policy);
    v("scheduler_policy", scheduler_policy);
    v("peer", peer);
    v("phase", phase);
    v("txn", txn);
    v("attempt", attempt);
    v("offer_cores", offer_cores);
    v("max_attempts", max_attempts);
    v("timeout_s", timeout_s);
    v("status_interval_s", status_interval_s);
    v("queued", queued);
    v("starting", starting);
    v("cores_total", cores_total);
    v("cores_busy", cores_busy);
    v("transactions", transactions);
    v("agreed", agreed);
    v("agreed_empty", agreed_empty);
    v("not_agreed", not_agreed);
    v("rejected_mappings", rejected_mappings);
    v("rejected_offers", rejected_offers);
    v("start_refusals", start_refusals);
    v("mean_rounds", mean_rounds);
    v("max_rounds", max_rounds);
    v("policy_errors", policy_errors);
    v("last_policy_error", last_policy_error);
    v("messages", messages);
    v("last_status", last_status);
  }
};

struct NegotiationList {
  std::vector<NegotiationInfo> partitions;
  template <class V>
  void fields(V& v) {
    v("partitions", partitions);
  }
};

}  // namespace sched::proto
