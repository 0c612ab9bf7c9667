#include "sched/mtct_window.hpp"

#include <cmath>
#include <cstddef>

namespace sched {

void MtctWindow::add(double time, double comm_s, double compute_s) {
  if (!samples_.empty() &&
      (comm_s < samples_.back().comm_s || compute_s < samples_.back().compute_s)) {
    clear();  // the sums started anew (a new step, a restarted agent)
  }
  if (window_s_ <= 0) {
    // Only the sums matter: one sample, replaced.
    if (samples_.empty()) samples_.emplace_back();
    samples_.back() = Sample{time, comm_s, compute_s};
    return;
  }
  samples_.push_back(Sample{time, comm_s, compute_s});
  // Keep one sample at or before time - window_s: the base of the window.
  std::size_t drop = 0;
  while (samples_.size() - drop > 2 && samples_[drop + 1].time <= time - window_s_) ++drop;
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(drop));
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
