#include "sched/mtct_window.hpp"

#include <cmath>

namespace sched {

void MtctWindow::add(double time, double comm_s, double compute_s) {
  if (!samples_.empty() &&
      (comm_s < samples_.back().comm_s || compute_s < samples_.back().compute_s)) {
    clear();  // the sums started anew (a new step, a restarted agent)
  }
  samples_.push_back(Sample{time, comm_s, compute_s});
  if (window_s_ <= 0) {
    samples_.erase(samples_.begin(), samples_.end() - 1);  // only the sums matter
    return;
  }
  // Keep one sample at or before time - window_s: the base of the window.
  while (samples_.size() > 2 && samples_[1].time <= time - window_s_) samples_.pop_front();
}

std::optional<double> MtctWindow::ratio() const {
  if (samples_.empty()) return std::nullopt;
  const Sample& last = samples_.back();
  double comm = last.comm_s;
  double compute = last.compute_s;
  const Sample& base = samples_.front();
  if (window_s_ > 0 && samples_.size() >= 2 && base.time <= last.time - window_s_) {
    comm -= base.comm_s;
    compute -= base.compute_s;
  }
  // else: the samples do not yet cover a window: all since the start.
  if (!(compute > 0)) return std::nullopt;
  return comm / compute;
}

bool mtct_moved(std::optional<double> last, double now, double fraction) {
  if (!last || fraction <= 0) return true;
  return std::fabs(now - *last) > fraction * std::fabs(*last) || (*last == 0 && now != 0);
}

}  // namespace sched
