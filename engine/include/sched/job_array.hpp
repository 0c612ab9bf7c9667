// Job arrays as sbatch writes them (--array, docs/user-guide.md "Job arrays"):
// one submission, one job per index, with consecutive job ids; the first id
// is the array's id (%A, SLURM_ARRAY_JOB_ID).
//
//   0-99        a range          0-99:2     every second index
//   1,3,5-7     a list           0-99%10    at most 10 tasks started at once
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/status.hpp"

namespace sched {

// Slurm's MaxArraySize default: indices 0..10000.
inline constexpr int kDefaultMaxArraySize = 10001;
// The largest MaxArraySize Slurm accepts: what a client that does not know
// the site's limit checks against (schedd checks its own).
inline constexpr int kMaxArraySizeCeiling = 4'000'001;

struct JobArraySpec {
  std::vector<int> indices;  // ascending, each once
  int throttle = 0;          // %N; 0: no limit

  int count() const { return static_cast<int>(indices.size()); }
  int min() const { return indices.empty() ? 0 : indices.front(); }
  int max() const { return indices.empty() ? 0 : indices.back(); }
  // The step of a single range with a step ("0-99:2" → 2, "1-5" → 1); 0 when
  // the indices are a list (Slurm sets SLURM_ARRAY_TASK_STEP only then).
  int step = 0;
};

// Parses sbatch's --array text. Every index must be below `max_array_size`
// (and kMaxArraySizeCeiling).
// Invalid names the bad part ("array '5-1': range 5-1 is reversed").
Result<JobArraySpec> parse_job_array(std::string_view text, int max_array_size);

// "A_i": a task's name in listings and accounting (squeue's %i).
std::string array_task_name(long long array_id, int index);

}  // namespace sched
