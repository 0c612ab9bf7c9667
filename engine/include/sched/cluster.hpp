// The compute nodes and who holds them. A node is idle when it is up, not
// draining and not allocated. A node being given back by a job (shrink,
// cancel, preemption) is *releasing*: still the job's, but a scheduling pass
// may already promise it to the next job, which starts once it is free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sched/job.hpp"

namespace sched {

// Node::job of a node of an invasive partition whose cores jobs hold
// (issue 20 item 2): the engine's CoreMap says which; the node is not idle.
inline constexpr JobId kCoresShared = -1;

struct Node {
  std::string name;
  int cores = 1;
  int sockets = 1;  // as its agent reports (hwloc); cores split evenly over them
  int gpus = 0;     // as its agent reports (hwloc, or declared)
  bool up = true;
  bool draining = false;
  JobId job = 0;           // holder, 0 when free
  bool releasing = false;  // the holder is giving it back
  JobId promised = 0;      // the job that gets it once released
  int partition = 0;       // index of its partition (sched/partition.hpp); 0 without any
};

class Cluster {
 public:
  // Adds a node; names are unique (throws std::invalid_argument otherwise).
  NodeIndex add_node(std::string name, int cores = 1);

  int size() const { return static_cast<int>(nodes_.size()); }
  const Node& node(NodeIndex index) const { return nodes_.at(static_cast<std::size_t>(index)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::optional<NodeIndex> find(std::string_view name) const;

  // Idle nodes: up, not draining, free.
  int idle_count() const { return idle_count_; }
  // The same within one partition (sched/partition.hpp), kept as nodes come
  // and go; an unknown index has none.
  int idle_count(int partition) const { return count_in(idle_by_partition_, partition); }
  int releasing_unpromised_count(int partition) const {
    return count_in(releasing_by_partition_, partition);
  }
  int partition_size(int partition) const { return count_in(size_by_partition_, partition); }
  // Moves a node to another partition (the engine's set_partitions).
  void set_partition(NodeIndex index, int partition);
  bool idle(NodeIndex index) const { return is_idle(index); }
  // Nodes being released and not yet promised: what a pass may count as
  // soon-to-be idle.
  int releasing_unpromised_count() const { return releasing_unpromised_; }
  // Nodes that are up and not draining (allocated or not).
  int usable_count() const;

  // Gives `count` nodes to `job`: idle ones first (lowest index first), then
  // releasing ones, which become promised. Returns the idle nodes taken now;
  // `promised_out` receives the promised ones. Throws std::logic_error if
  // there are not enough. With `partition` >= 0, only nodes of that partition
  // are taken (and counted).
  std::vector<NodeIndex> allocate(JobId job, int count, std::vector<NodeIndex>* promised_out,
                                  int partition = -1);

  // Gives one particular free node to `job` (recovery: the journal says who
  // held it). Throws std::logic_error when the node is held.
  void assign(NodeIndex index, JobId job);
  // The holder starts giving the node back.
  void mark_releasing(NodeIndex index);
  // The holder is done with the node. Returns the job it was promised to
  // (which now holds it), or 0 when the node became idle.
  JobId release(NodeIndex index);
  // The same for every node of a job's allocation that `job` holds, at once
  // (issue 15: a job's end gives back all its nodes); a node only promised
  // to it has the promise withdrawn. The jobs nodes were handed to, one per
  // node, in order, are appended to `handed_to`.
  void release_held(JobId job, const std::vector<NodeIndex>& nodes, std::vector<JobId>& handed_to);

  // The holder stops giving the node back (a shrink rolled back); any promise
  // must have been withdrawn first.
  void keep(NodeIndex index);
  // Withdraws the promise of a releasing node (the waiting job gave up).
  void unpromise(NodeIndex index);

  void set_up(NodeIndex index, bool up);
  void set_gpus(NodeIndex index, int gpus);
  void set_sockets(NodeIndex index, int sockets);
  void set_draining(NodeIndex index, bool draining);

 private:
  void refresh_idle(NodeIndex index);
  bool is_idle(NodeIndex index) const {
    const auto i = static_cast<std::size_t>(index);
    return (idle_[i / 64] >> (i % 64)) & 1u;
  }
  // Per node of every allocation and release (issue 15): no resize here, the
  // counters are sized as partitions appear (fit_partition).
  void set_idle(NodeIndex index, bool idle) {
    if (is_idle(index) == idle) return;
    const auto i = static_cast<std::size_t>(index);
    idle_[i / 64] ^= std::uint64_t{1} << (i % 64);
    const int delta = idle ? 1 : -1;
    idle_count_ += delta;
    idle_by_partition_[static_cast<std::size_t>(nodes_[i].partition)] += delta;
  }
  // Sizes the per-partition counters to hold `partition`.
  void fit_partition(int partition);
  // Whether a node counts as releasing and unpromised, and the counters' step.
  static bool counts_releasing(const Node& node) {
    return node.releasing && node.promised == 0 && node.up && !node.draining;
  }
  void add_releasing(const Node& node, int delta);
  static int count_in(const std::vector<int>& counts, int partition) {
    return partition >= 0 && static_cast<std::size_t>(partition) < counts.size()
               ? counts[static_cast<std::size_t>(partition)]
               : 0;
  }
  static void bump(std::vector<int>& counts, int partition, int delta);

  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeIndex> by_name_;
  // One bit per node, set when idle: taking the lowest idle nodes is a scan
  // of words, and nothing allocates as nodes come and go.
  std::vector<std::uint64_t> idle_;
  int idle_count_ = 0;
  int releasing_unpromised_ = 0;
  // Per partition index: the counts above, and how many nodes it has.
  std::vector<int> idle_by_partition_;
  std::vector<int> releasing_by_partition_;
  std::vector<int> size_by_partition_;
};

}  // namespace sched
