// ctx.pending (issue 15): one plain Lua sequence for the life of the policy
// state, brought up to date before a pass reads it from the pending queue's
// change log: an append costs O(1), a removal shifts the list in place, a
// reorder (a priority rekey) rebuilds it. Read-only by contract; the common
// ways of changing it are refused (lua_ctx.cpp).
#include <algorithm>

#include "lua_runtime.hpp"
#include "sched/pass_context.hpp"

namespace sched {

using Key = PendingQueue::Key;

void LuaRuntime::write_pending(int list, int jobs, std::size_t from,
                               const std::vector<PendingSlot>& old_tail) {
  // Positions from `from` on that now hold another job (old_tail[k] is what
  // position from + k held), and the tail the queue no longer has.
  const auto id_of = [](const PendingSlot& slot) { return std::get<3>(slot.key); };
  for (std::size_t i = from; i < pending_mirror_.size(); ++i) {
    const std::size_t k = i - from;
    if (k < old_tail.size() && id_of(old_tail[k]) == id_of(pending_mirror_[i])) continue;
    push_job(*pending_mirror_[i].job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
  }
  for (std::size_t i = std::max(pending_mirror_.size(), from); i < from + old_tail.size(); ++i) {
    lua_pushnil(L_);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
  }
}

void LuaRuntime::push_pending_list(PassContext& ctx) {
  const PendingQueue& queue = ctx.pending_queue();
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_pending_list_);
  const int list = lua_gettop(L_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  const auto changes = pending_built_ ? queue.changes_since(pending_seen_) : std::nullopt;
  const bool rebuild = !changes || std::any_of(changes->begin(), changes->end(), [](const auto& c) {
    return c.kind == PendingQueue::Change::Kind::Reorder;
  });
  if (rebuild) {
    std::vector<PendingSlot> before = std::move(pending_mirror_);
    pending_mirror_.clear();
    pending_mirror_.reserve(queue.size());
    auto cursor = queue.cursor();
    while (const Job* job = cursor.next()) {
      pending_mirror_.push_back(PendingSlot{PendingQueue::key_of(*job), job});
    }
    write_pending(list, jobs, 0, before);
  } else if (!changes->empty()) {
    apply_pending_changes(*changes, list, jobs);
  }
  pending_seen_ = queue.changes_end();
  pending_built_ = true;
  lua_pop(L_, 1);  // leaves the list
}

void LuaRuntime::apply_pending_changes(std::span<const PendingQueue::Change> changes, int list,
                                       int jobs) {
  // The net effect by key: a job inserted and removed (or the reverse)
  // since the last look is where it was.
  std::vector<Delta>& deltas = scratch_deltas_;
  std::vector<Delta>& net = scratch_net_;
  deltas.clear();
  net.clear();
  for (const auto& change : changes) {
    deltas.push_back(Delta{
        change.key, change.kind == PendingQueue::Change::Kind::Insert ? change.job : nullptr});
  }
  std::stable_sort(deltas.begin(), deltas.end(),
                   [](const Delta& a, const Delta& b) { return a.key < b.key; });
  for (std::size_t i = 0; i < deltas.size();) {
    std::size_t j = i;
    int count = 0;
    while (j < deltas.size() && deltas[j].key == deltas[i].key) {
      count += deltas[j].job ? 1 : -1;
      ++j;
    }
    if (count > 0) net.push_back(Delta{deltas[i].key, deltas[j - 1].job});
    if (count < 0) net.push_back(Delta{deltas[i].key, nullptr});
    i = j;
  }
  if (net.empty()) return;
  const auto by_key = [](const PendingSlot& slot, const Key& key) { return slot.key < key; };
  const std::size_t from = static_cast<std::size_t>(
      std::lower_bound(pending_mirror_.begin(), pending_mirror_.end(), net.front().key, by_key) -
      pending_mirror_.begin());
  // Merge the mirror's tail from `from` with the net changes; src[k] is the
  // old position of what new position from + k holds (-1: inserted).
  std::vector<PendingSlot>& before = scratch_tail_;
  before.assign(pending_mirror_.begin() + static_cast<std::ptrdiff_t>(from), pending_mirror_.end());
  pending_mirror_.resize(from);
  std::vector<std::ptrdiff_t>& src = scratch_src_;
  src.clear();
  std::size_t b = 0;
  const auto keep = [&] {
    src.push_back(static_cast<std::ptrdiff_t>(from + b));
    pending_mirror_.push_back(before[b++]);
  };
  for (const Delta& delta : net) {
    while (b < before.size() && before[b].key < delta.key) keep();
    const bool present = b < before.size() && before[b].key == delta.key;
    if (delta.job) {
      if (present) {
        keep();  // the same key is the same job: already there
      } else {
        src.push_back(-1);
        pending_mirror_.push_back(PendingSlot{delta.key, delta.job});
      }
    } else if (present) {
      ++b;  // removed
    }
  }
  while (b < before.size()) keep();
  // Move the kept jobs within the list (a left shift front to back, a right
  // shift back to front: src is increasing, so neither overwrites what the
  // other still reads), then write the new ones and clear the old tail.
  const auto move = [&](std::size_t k) {
    lua_rawgeti(L_, list, static_cast<lua_Integer>(src[k] + 1));
    lua_rawseti(L_, list, static_cast<lua_Integer>(from + k + 1));
  };
  for (std::size_t k = 0; k < src.size(); ++k) {
    if (src[k] > static_cast<std::ptrdiff_t>(from + k)) move(k);
  }
  for (std::size_t k = src.size(); k-- > 0;) {
    if (src[k] >= 0 && src[k] < static_cast<std::ptrdiff_t>(from + k)) move(k);
  }
  for (std::size_t k = 0; k < src.size(); ++k) {
    if (src[k] >= 0) continue;
    push_job(*pending_mirror_[from + k].job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(from + k + 1));
  }
  for (std::size_t i = pending_mirror_.size(); i < from + before.size(); ++i) {
    lua_pushnil(L_);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
  }
}

}  // namespace sched
