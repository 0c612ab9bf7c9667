// The two sides' decisions as Lua policies (issue 20, docs/policy-api.md
// §12). The iHypervisor's policy builds offers from its view of the
// partition (make_offer) and judges the iScheduler's mappings (judge); the
// iScheduler's policy maps pending jobs onto an offer (map). Each call that
// fails (a Lua error, a bound hit, a result of the wrong shape) returns the
// error; the components then fall back (docs/policy-api.md §12.4).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/invasive/lua_host.hpp"
#include "sched/invasive/partition.hpp"
#include "sched/proto/negotiation_messages.hpp"

namespace sched::invasive {

// What the iHypervisor's policy sees.
struct HypervisorView {
  double time = 0;
  std::int64_t txn = 0;  // the open transaction; 0 for a new one's first offer
  int attempt = 1;       // of the offer to make (make_offer) or judged (judge)
  std::string reason;    // why an offer is made
  const Partition* partition = nullptr;
  // The mappings the iHypervisor rejected in this transaction, oldest first.
  std::vector<std::vector<proto::NegoPlacement>> rejected;
};

struct Judgement {
  bool accepted = false;
  std::string reason;
};

class HypervisorPolicy {
 public:
  explicit HypervisorPolicy(const std::string& path, LuaHostOptions options = {});
  LuaHost& host() { return host_; }

  // The offer (its `offer` id is left 0 for the component to set).
  std::optional<proto::NegoOfferSet> make_offer(const HypervisorView& view, std::string* error);
  std::optional<Judgement> judge(const proto::NegoOfferSet& offer,
                                 const std::vector<proto::NegoPlacement>& mapping,
                                 const HypervisorView& view, std::string* error);

 private:
  LuaHost host_;
};

struct PendingJob {
  std::int64_t job = 0;
  int cores = 1;
  double submit = 0;
};

// The iScheduler's answer to an offer: a mapping, or a rejection.
struct MapResult {
  bool accepted = false;
  std::vector<proto::NegoPlacement> mapping;
  std::string reason;
};

class SchedulerPolicy {
 public:
  explicit SchedulerPolicy(const std::string& path, LuaHostOptions options = {});
  LuaHost& host() { return host_; }

  // `pending` in queue order (longest waiting first).
  std::optional<MapResult> map(const proto::NegoOfferSet& offer, int attempt, bool last_attempt,
                               const std::vector<PendingJob>& pending,
                               const std::optional<proto::NegoStatus>& report, double now,
                               std::string* error);

 private:
  LuaHost host_;
};

}  // namespace sched::invasive
