// The engine's one seam to the outside world's time (STYLE: LevelDB's Env).
// The daemon passes a real clock, the simulator a virtual one; nothing in the
// engine reads wall time directly.
#pragma once

namespace sched {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds on the scheduler's time line (simulated or epoch-based).
  virtual double now() const = 0;
  // A monotonic reading in seconds used only to measure how long passes
  // take (statistics) and to bound how long a policy may run (a pass over
  // its time bound fails); never an input of scheduling decisions.
  virtual double monotonic() const = 0;
};

// A clock that moves only when told to: the simulator's, and tests'.
class ManualClock : public Clock {
 public:
  double now() const override { return now_; }
  double monotonic() const override;  // real monotonic time: pass timing stays meaningful
  void set(double t) { now_ = t; }
  void advance(double dt) { now_ += dt; }

 private:
  double now_ = 0;
};

// The wall clock (UNIX epoch seconds) for the live daemon.
class SystemClock : public Clock {
 public:
  double now() const override;
  double monotonic() const override;
};

}  // namespace sched
