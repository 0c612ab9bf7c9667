// Rigid replay of traces in the Standard Workload Format (docs/design.md §7).
//
// An SWF file has ';' header comments ("; MaxProcs: 256") and one job per
// line with 18 whitespace-separated numeric fields. We keep what a rigid
// replay needs: job number (1), submit time (2), run time (4), allocated
// processors (5), requested processors (8), requested time (9), user (12).
// Processor counts become node counts through cores_per_node.
#pragma once

#include <iosfwd>
#include <string>

#include "sched/sim/workload.hpp"

namespace sched::sim {

struct SwfOptions {
  // Processors per node: a job of p processors needs ceil(p / cores_per_node)
  // nodes, and the cluster has floor(MaxProcs / cores_per_node) nodes.
  int cores_per_node = 1;
  // Cluster size in nodes; 0 takes it from the header (MaxProcs, else
  // MaxNodes, divided by cores_per_node, at least 1).
  int nodes = 0;
  // Read only the first max_jobs job records (skipped ones included), so a
  // prefix of a long trace replays quickly; 0 reads them all.
  long max_jobs = 0;
};

// Reads the trace at `path`. Throws WorkloadError when the file cannot be
// opened, a line is malformed ("FILE:LINE: what is wrong"), the options are
// invalid, or the cluster size is known neither from the header nor from
// options.nodes. Jobs that cannot be replayed (negative run time, no
// processors, larger than the cluster) are left out and counted in
// Workload::skipped.
Workload read_swf(const std::string& path, const SwfOptions& options);

// The same, from a stream; `source_name` names it in messages and becomes
// Workload::source.
Workload parse_swf(std::istream& in, const std::string& source_name, const SwfOptions& options);

}  // namespace sched::sim
