// sbatch's filename patterns in a job's -o/-e paths (issue 18 item 3).
//
// schedd expands them when it builds a job's launch (convert::job_launch),
// not the agent: schedd knows every field (id, name, user and the leader's
// node name once the job is placed), so `sched show` and `sched acct` print
// the very names the agent opens, and the agent needs no knowledge of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sched/job.hpp"

namespace sched::convert {

// Slurm's %a for a job that is not in an array (NO_VAL - 1).
inline constexpr std::uint32_t kNoArrayIndex = 4294967294U;

struct OutputNames {
  JobId job = 0;
  std::string name;
  std::string user;
  std::string node;  // the leader's name; empty while unknown: %N stays as written
  // Arrays (issue 18 item 1) fill these in; unset: %A is the job id, %a is
  // kNoArrayIndex, as Slurm writes for a job outside an array.
  std::optional<JobId> array_master;
  std::optional<std::uint32_t> array_index;
};

// %j job id, %x name, %N node, %u user, %A array master, %a array index,
// %% a '%'. A width between '%' and the letter zero-pads numbers and
// right-aligns text with blanks ("%5j" -> "00042"). Unknown letters and a
// trailing '%' stay as written. A pattern holding a backslash is not
// expanded and loses its backslashes (sbatch's rule).
std::string expand_output_pattern(std::string_view pattern, const OutputNames& names);

}  // namespace sched::convert
