// The engine's side of a negotiated partition (issue 20 items 3, 5;
// docs/admin.md "Negotiated partitions"): a C++ policy that runs the
// partition's passes. It decides nothing itself: in each live pass it
// notes the jobs the engine offers (they feed the iScheduler) and issues
// what the iHypervisor decided: the suspensions an urgent job needs, the
// starts the negotiation agreed (each on its agreed cores), and the
// resumptions of suspended jobs whose cores are free again, in that order,
// each checked by the engine as any policy's action is (docs/design.md §2:
// the engine stays the authority; a refused one is reported, never retried).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/job.hpp"
#include "sched/policy.hpp"

namespace sched::daemon {

class NegotiationPolicy : public Policy {
 public:
  // A job the engine offered in the partition's last live pass.
  struct Offered {
    JobId job = 0;
    int cores = 1;
    double submit = 0;
    bool urgent = false;
  };
  // An agreed start, and what the engine made of it.
  struct Start {
    JobId job = 0;
    CoreSet cores;
  };
  enum class Kind { Suspend, Start, Resume };
  struct Outcome {
    JobId job = 0;
    std::optional<std::string> refused;  // the engine's refusal; nothing: done
    Kind kind = Kind::Start;
  };

  explicit NegotiationPolicy(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override;

  // The glue's side (schedd/negotiation.hpp), between passes.
  void add_start(Start start) { starts_.push_back(std::move(start)); }
  void add_suspend(JobId job) { suspends_.push_back(job); }
  void add_resume(JobId job) { resumes_.push_back(job); }
  bool has_starts() const { return !starts_.empty(); }
  std::vector<Outcome> take_outcomes() { return std::exchange(outcomes_, {}); }
  // The partition's queue as of the last live pass (priority order), and
  // how many live passes there were (a new one: the queue may have changed).
  const std::vector<Offered>& offered() const { return offered_; }
  std::uint64_t passes() const { return passes_; }

 private:
  std::string name_;
  std::vector<JobId> suspends_;
  std::vector<Start> starts_;
  std::vector<JobId> resumes_;
  std::vector<Outcome> outcomes_;
  std::vector<Offered> offered_;
  std::uint64_t passes_ = 0;
};

}  // namespace sched::daemon
