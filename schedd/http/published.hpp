// What the daemon thread hands to the HTTP threads: the only state they share.
//
// Why a published snapshot rather than a query queue: civetweb serves on its
// own threads and must never touch the engine, which belongs to the daemon
// thread. The daemon thread renders the metrics text and the state JSON
// after a loop turn that changed something (at most a few times a second)
// and swaps them in here under a mutex; an HTTP thread copies a string out.
// A scrape then never waits for a busy pass, and the engine needs no locks.
// Events go through a bounded ring the same way, with a condition variable
// that wakes the Server-Sent Events streams.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched::daemon::http {

class Published {
 public:
  // How many recent events a reconnecting stream can catch up on; older
  // than that, the page loads the state again.
  static constexpr std::size_t kRing = 2000;

  // ---- the daemon thread
  void set_snapshot(std::string metrics, std::string state);
  void add_event(std::uint64_t seq, std::string json);
  // Wakes every stream waiting and makes it return (before the server stops).
  void close();

  // ---- HTTP threads
  std::string metrics() const;
  std::string state() const;
  using Events = std::vector<std::pair<std::uint64_t, std::string>>;
  // The events after `seq`, waiting up to `wait_ms` for one: empty when none
  // came; nullopt when events after `seq` have already left the ring (the
  // client must reload the state) or when closed (`closed()` says which).
  std::optional<Events> events_after(std::uint64_t seq, int wait_ms) const;
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::string metrics_;
  std::string state_ = "{}";
  std::deque<std::pair<std::uint64_t, std::string>> events_;
  std::uint64_t dropped_through_ = 0;  // the newest seq that left the ring
  bool closed_ = false;
};

}  // namespace sched::daemon::http
