// The iHypervisor's model of its invasive partition (issue 20): nodes ×
// sockets × cores, which job holds each core, the jobs it runs or has
// suspended. Cores are numbered per node socket-major, as hwloc's logical
// indexes are: socket s holds cores s·C … s·C + C − 1 (C cores per socket).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/proto/negotiation_messages.hpp"

namespace sched::invasive {

struct Topology {
  std::vector<std::string> nodes;
  int sockets_per_node = 2;
  int cores_per_socket = 4;
  int cores_per_node() const { return sockets_per_node * cores_per_socket; }
  int cores_total() const { return static_cast<int>(nodes.size()) * cores_per_node(); }
  // `count` nodes named n0, n1, …
  static Topology uniform(int count, int sockets, int cores_per_socket);
};

// Sockets a set of cores of one node spans beyond the fewest that could hold
// them: 0 when packed (the socket-packing measure of one placement).
int extra_sockets(const std::vector<int>& cores, int cores_per_socket);
// The same summed over a job's placements.
int extra_sockets(const std::vector<proto::NegoPlacement>& placements, int cores_per_socket);

struct PartitionJob {
  std::int64_t job = 0;
  std::vector<proto::NegoPlacement> placement;
  double start = 0;
  bool suspended = false;
  int cores() const;
};

class Partition {
 public:
  explicit Partition(Topology topology);

  const Topology& topology() const { return topology_; }
  int cores_total() const { return topology_.cores_total(); }
  // Cores held by running jobs.
  int cores_busy() const;
  // Free cores (held by no job, not kept for a suspended one), as offer
  // resources; nodes and sockets without a free core are left out.
  std::vector<proto::NegoResource> free_resources() const;
  bool is_free(const std::string& node, int core) const;
  // No running job holds it (it may be kept for a suspended one).
  bool is_idle(const std::string& node, int core) const;
  const std::map<std::int64_t, PartitionJob>& jobs() const { return jobs_; }
  bool has(std::int64_t job) const { return jobs_.contains(job); }
  // Ids of the jobs it runs or holds suspended.
  std::vector<std::int64_t> job_ids() const;

  // Starts `job` on `placement` (every core must be free; returns why not).
  // `urgent`: cores kept for suspended jobs may be taken too.
  std::optional<std::string> start(std::int64_t job, std::vector<proto::NegoPlacement> placement,
                                   double now, bool urgent = false);
  // The job ended: its cores are free.
  void end(std::int64_t job);
  // Suspends a running job: its cores are freed for an urgent job but kept
  // from offers until it resumes on them.
  void suspend(std::int64_t job);
  // Resumes suspended jobs whose cores are all free again, oldest
  // suspension first; returns their ids.
  std::vector<std::int64_t> resume_ready();

 private:
  struct Core {
    std::int64_t owner = 0;     // 0: free
    std::int64_t kept_for = 0;  // a suspended job that resumes here
  };
  int node_index(const std::string& node) const;
  Core* core(const std::string& node, int c);
  const Core* core(const std::string& node, int c) const;

  Topology topology_;
  std::vector<std::vector<Core>> cores_;  // [node][core]
  std::map<std::int64_t, PartitionJob> jobs_;
  std::vector<std::int64_t> suspended_order_;
};

}  // namespace sched::invasive
