// Rigid replay of traces in the Standard Workload Format (docs/design.md §7).
//
// An SWF file has ';' header comments ("; MaxProcs: 256") and one job per
// line with 18 whitespace-separated numeric fields. We keep what a rigid
// replay needs: job number (1), submit time (2), run time (4), allocated
// processors (5), requested processors (8), requested time (9), user (12).
// Processor counts become node counts through cores_per_node.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

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

// What one replayable record says (issue 15): 48 bytes, where a
// WorkloadJob is about 760. The rest of its job follows from these.
struct SwfRecord {
  JobId id = 0;
  double submit = 0;
  double runtime = 0;
  double walltime = 0;    // the estimate, at least the run time
  std::int64_t user = 0;  // field 12; 0: none
  int nodes = 0;
};

// A plain replay's jobs kept as records, each made into its WorkloadJob
// only when the simulator submits it (Simulator's JobSource constructor):
// a 100,000-job trace takes 5 MB instead of 76. The jobs are those
// read_swf gives, in the same order.
struct SwfTrace : JobSource {
  Workload header;                 // all but the jobs (header.jobs is empty)
  std::vector<SwfRecord> records;  // in submission order (submit, then id)

  std::size_t size() const override { return records.size(); }
  WorkloadJob make(std::size_t index) const override;
  // Every job made: the workload read_swf gives.
  Workload workload() const;
};

// Reads the trace at `path`. Throws WorkloadError when the file cannot be
// opened, a line is malformed ("FILE:LINE: what is wrong"; a submit, run
// or requested time beyond 1e9 s, which the simulator could not step, is
// malformed too), the options are
// invalid, or the cluster size is known neither from the header nor from
// options.nodes. Jobs that cannot be replayed (negative run time, no
// processors, larger than the cluster) are left out and counted in
// Workload::skipped.
Workload read_swf(const std::string& path, const SwfOptions& options);

// The same, from a stream; `source_name` names it in messages and becomes
// Workload::source.
Workload parse_swf(std::istream& in, const std::string& source_name, const SwfOptions& options);

// The same, the jobs kept as records.
SwfTrace read_swf_trace(const std::string& path, const SwfOptions& options);
SwfTrace parse_swf_trace(std::istream& in, const std::string& source_name,
                         const SwfOptions& options);

}  // namespace sched::sim
