// A bounded log of changes with sequence numbers, for a consumer that keeps
// a copy of some engine state across passes and patches it (the Lua host's
// job tables and ctx.pending, issue 15). A consumer remembers end() and
// later asks for since(that); when the log was dropped in between (it
// outgrew its bound), since() says so and the consumer rebuilds its copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sched {

template <typename T>
class ChangeLog {
 public:
  // The sequence number the next entry gets.
  std::uint64_t end() const { return base_ + entries_.size(); }

  // The entries from sequence number `from` on; nullopt when dropped.
  std::optional<std::span<const T>> since(std::uint64_t from) const {
    if (from < base_ || from > end()) return std::nullopt;
    return std::span<const T>(entries_).subspan(static_cast<std::size_t>(from - base_));
  }

  // Appends; first drops the whole log when it holds `bound` entries.
  void append(T entry, std::size_t bound) {
    if (entries_.size() >= bound) {
      base_ += entries_.size();
      entries_.clear();
    }
    entries_.push_back(std::move(entry));
  }

 private:
  std::vector<T> entries_;  // entries_[i] has sequence number base_ + i
  std::uint64_t base_ = 0;
};

}  // namespace sched
