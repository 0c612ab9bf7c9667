// MTCT over a recent window (issue 17 item 5). MTCT is the paper's measure of
// a malleable job's efficiency: time in communication over time in
// computation. What is measured are running sums since the job's last
// adaptation (the agents' perf.report, the simulator's model); a ratio of
// those sums hides a change of phase under the average of everything before
// it, so the engine keeps the recent sums and takes the ratio of what was
// added over the last window_s seconds.
#pragma once

#include <optional>
#include <vector>

namespace sched {

class MtctWindow {
 public:
  // window_s <= 0: no window, the ratio of the whole sums (since the last
  // adaptation).
  explicit MtctWindow(double window_s = 0) : window_s_(window_s) {}

  // The sums as of `time` (they only grow; smaller ones start anew).
  void add(double time, double comm_s, double compute_s);
  // Communication over computation added since the newest sample at least
  // window_s older than the last (since the start when there is none): a
  // window of window_s to window_s plus one sampling interval. Nothing
  // before any computation time was added in it.
  std::optional<double> ratio() const;
  void clear() { samples_.clear(); }
  // Empty, with this window (the samples' room is kept).
  void reset(double window_s) {
    window_s_ = window_s;
    samples_.clear();
  }
  bool empty() const { return samples_.empty(); }

 private:
  struct Sample {
    double time;
    double comm_s;
    double compute_s;
  };
  double window_s_;
  // Oldest first; the first is the window's base once the samples cover it.
  // A vector: a window holds a few samples, and a std::deque allocates even
  // empty (issue 15: one window per running job).
  std::vector<Sample> samples_;
};

// Whether a new MTCT is worth telling the policy: there was none, or it moved
// from the last one by more than `fraction` of it (0 or less: always).
bool mtct_moved(std::optional<double> last, double now, double fraction);

}  // namespace sched
