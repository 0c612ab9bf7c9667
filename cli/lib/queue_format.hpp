// `sched queue -o/--format`: squeue's format letters (issue 18 item 6).
//
// A format is text with fields "%[-|.][width]letter": '.' right-aligns, '-'
// (or nothing) left-aligns, a width pads to it and cuts what is longer, as
// squeue does; no width prints the value as it is. "%%" is a '%'.
//
//   %i JOBID       %j NAME        %u USER        %t ST (PD, R, ...)
//   %T STATE       %M TIME        %l TIME_LIMIT  %L TIME_LEFT
//   %D NODES       %N NODELIST    %R NODELIST(REASON): nodes, else (reason)
//   %P PARTITION: the job's partition ("batch" without configured partitions)
//   %V SUBMIT_TIME %S START_TIME (expected start while pending) %e END_TIME
//   (expected end while running)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "listings.hpp"

namespace sched::cli {

// The partition %P prints for a row that names none (a schedd from before
// partitions): the implicit partition's name (sched/partition.hpp).
inline constexpr std::string_view kPartitionName = "batch";

struct FormatField {
  std::string text;  // literal text (letter == 0)
  char letter = 0;
  int width = 0;  // 0: as long as the value
  bool right = false;
};

// Throws std::invalid_argument naming the first letter squeue's set here
// lacks ("unknown format letter %Q in '...'") or a bad width.
std::vector<FormatField> parse_queue_format(std::string_view format);

// The header line (the letters' column names, aligned as their values).
std::string format_queue_header(const std::vector<FormatField>& fields);

// One job's line; `now` (epoch seconds) is for %L of a running job.
std::string format_queue_row(const std::vector<FormatField>& fields, const QueueRow& row,
                             double now);

}  // namespace sched::cli
