#include "published.hpp"

#include <chrono>

namespace sched::daemon::http {

void Published::set_snapshot(std::string metrics, std::string state) {
  std::lock_guard lock(mutex_);
  metrics_ = std::move(metrics);
  state_ = std::move(state);
}

void Published::add_event(std::uint64_t seq, std::string json) {
  {
    std::lock_guard lock(mutex_);
    events_.emplace_back(seq, std::move(json));
    while (events_.size() > kRing) {
      dropped_through_ = events_.front().first;
      events_.pop_front();
    }
  }
  changed_.notify_all();
}

void Published::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

std::string Published::metrics() const {
  std::lock_guard lock(mutex_);
  return metrics_;
}

std::string Published::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

bool Published::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::optional<Published::Events> Published::events_after(std::uint64_t seq, int wait_ms) const {
  std::unique_lock lock(mutex_);
  auto newer = [&] { return closed_ || (!events_.empty() && events_.back().first > seq); };
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms), newer);
  if (closed_) return std::nullopt;
  // Some of what came after `seq` is gone: the caller cannot catch up.
  if (dropped_through_ > seq) return std::nullopt;
  Events out;
  for (const auto& [event_seq, json] : events_) {
    if (event_seq > seq) out.emplace_back(event_seq, json);
  }
  return out;
}

}  // namespace sched::daemon::http
