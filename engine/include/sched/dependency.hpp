// Job dependencies as sbatch writes them (--dependency): which jobs a job
// waits for, and whether what they did so far lets it start, keeps it
// waiting, or never will (docs/user-guide.md, "Dependencies").
//
//   after:ID[:ID...]       the other jobs have started (or ended)
//   afterany:ID[:ID...]    they have ended, however
//   afterok:ID[:ID...]     they have completed with exit code 0
//   afternotok:ID[:ID...]  they have failed, timed out or been cancelled
//   singleton              no earlier job of the same name and user is waiting or running
//
// Terms joined with ',' must all hold; terms joined with '?', any one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/job.hpp"
#include "sched/status.hpp"

namespace sched {

enum class DependencyType { After, AfterAny, AfterOk, AfterNotOk, Singleton };

struct DependencyTerm {
  DependencyType type = DependencyType::AfterAny;
  std::vector<JobId> jobs;  // empty for singleton
};

struct Dependency {
  std::vector<DependencyTerm> terms;
  bool any = false;  // joined with '?' (any term) rather than ',' (all terms)

  bool empty() const { return terms.empty(); }
  // Every job id named, once each, in order of appearance.
  std::vector<JobId> jobs() const;
};

// Parses sbatch's syntax. Invalid names the bad part ("dependency 'afterok:x':
// 'x' is not a job id"). An empty text is no dependency.
Result<Dependency> parse_dependency(std::string_view text);
// The canonical text (what parse_dependency reads back to the same value).
std::string to_string(const Dependency& dependency);
std::string_view to_string(DependencyType type);

// What one term's condition says of one job it names.
enum class Satisfaction { Waiting, Satisfied, Never };
// `state`: the job's state; `started`: whether it ever left PENDING.
Satisfaction satisfaction(DependencyType type, JobState state, bool started);
// Several results, all required (a term's jobs, ',' terms) or any one ('?').
Satisfaction combine(const std::vector<Satisfaction>& parts, bool any);

}  // namespace sched
