// ctx.pending (issue 15): one plain Lua sequence for the life of the policy
// state, brought up to date before a pass reads it from the pending queue's
// change log: an append costs O(1), a removal shifts the list in place, a
// reorder (a priority rekey) starts it again. Its positions are filled on
// first read, in order (the metatable's __index, doubling), so a pass that
// looks at the head of a long queue makes the tables of the head only.
// Read-only by contract; the common ways of changing it are refused
// (lua_ctx.cpp).
#include <algorithm>
#include <tuple>
#include <type_traits>

#include "lua_runtime.hpp"
#include "sched/pass_context.hpp"

namespace sched {

void LuaRuntime::push_pending_list(PassContext& ctx) {
  static_assert(std::is_trivially_copyable_v<PendingSlot>, "the mirror is patched by byte copies");
  const PendingQueue& queue = ctx.pending_queue();
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_pending_list_);
  const int list = lua_gettop(L_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  // A policy that runs the passes of several partitions (the engine's, for
  // partitions without their own) keeps one partition's list at a time.
  const int partition = ctx.partition();
  const auto changes = pending_built_ && pending_partition_ == partition
                           ? queue.changes_since(pending_seen_)
                           : std::nullopt;
  const bool rebuild = !changes || std::any_of(changes->begin(), changes->end(), [](const auto& c) {
    return c.kind == PendingQueue::Change::Kind::Reorder;
  });
  if (rebuild) {
    // Filled again on demand.
    for (std::size_t i = 0; i < pending_filled_; ++i) {
      lua_pushnil(L_);
      lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
    }
    pending_filled_ = 0;
    pending_mirror_.clear();
    pending_mirror_.reserve(queue.size());
    auto cursor = queue.cursor();
    while (const Job* job = cursor.next()) {
      if (partition >= 0 && job->partition != partition) continue;
      pending_mirror_.push_back(PendingSlot{SlotKey::of(PendingQueue::key_of(*job)), job});
    }
  } else if (!changes->empty()) {
    apply_pending_changes(*changes, list, jobs, partition);
  }
  pending_partition_ = partition;
  pending_seen_ = queue.changes_end();
  pending_built_ = true;
  lua_pop(L_, 1);  // leaves the list
}

void LuaRuntime::fill_pending(std::size_t count) {
  // Reading position i usually means reading i+1 next: fill ahead, doubling.
  const std::size_t last =
      std::min(pending_mirror_.size(), std::max({count, 2 * pending_filled_, std::size_t{4}}));
  if (last <= pending_filled_) return;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_pending_list_);
  const int list = lua_gettop(L_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  for (std::size_t i = pending_filled_; i < last; ++i) {
    push_job(*pending_mirror_[i].job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
    pending_filled_ = i + 1;  // what is filled stays true even after an error
  }
  lua_pop(L_, 2);
}

void LuaRuntime::push_pending_job(std::size_t position) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  push_job(*pending_mirror_[position - 1].job, lua_gettop(L_));
  lua_remove(L_, -2);
}

std::optional<std::size_t> LuaRuntime::next_pending_fit(const PendingFit& fit) const {
  const auto first = static_cast<std::size_t>(std::max<lua_Integer>(fit.from, 1));
  for (std::size_t i = first; i <= pending_mirror_.size(); ++i) {
    const JobSpec& spec = pending_mirror_[i - 1].job->spec;
    // A moldable job may start at any size from its minimum (the caller
    // picks one); its limit does not depend on the size.
    const int need = spec.kind == JobKind::Moldable ? spec.min_nodes : spec.nodes;
    if (need > fit.nodes) continue;
    // The same double arithmetic as the Lua it replaces: now + walltime <= until.
    if (!fit.until || (spec.walltime > 0 && fit.now + spec.walltime <= *fit.until) ||
        need <= fit.spare) {
      return i;
    }
  }
  return std::nullopt;
}

void LuaRuntime::apply_pending_changes(std::span<const PendingQueue::Change> changes, int list,
                                       int jobs, int partition) {
  // The net effect by key: a job inserted and removed (or the reverse)
  // since the last look is where it was.
  std::vector<Delta>& deltas = scratch_deltas_;
  std::vector<Delta>& net = scratch_net_;
  deltas.clear();
  net.clear();
  for (const auto& change : changes) {
    if (partition >= 0 && change.partition != partition) continue;  // another partition's
    deltas.push_back(Delta{SlotKey::of(change.key),
                           change.kind == PendingQueue::Change::Kind::Insert ? change.job : nullptr,
                           deltas.size()});
  }
  if (deltas.size() == 1) {
    // The common pass: one submission or one start since the last.
    apply_one_change(deltas.front(), list, jobs);
    return;
  }
  // Stable by key, without the temporary buffer std::stable_sort allocates.
  std::sort(deltas.begin(), deltas.end(), [](const Delta& a, const Delta& b) {
    return std::tie(a.key, a.order) < std::tie(b.key, b.order);
  });
  for (std::size_t i = 0; i < deltas.size();) {
    std::size_t j = i;
    int count = 0;
    while (j < deltas.size() && deltas[j].key == deltas[i].key) {
      count += deltas[j].job ? 1 : -1;
      ++j;
    }
    if (count > 0) net.push_back(Delta{deltas[i].key, deltas[j - 1].job, 0});
    if (count < 0) net.push_back(Delta{deltas[i].key, nullptr, 0});
    i = j;
  }
  if (net.empty()) return;
  if (net.size() == 1) {
    apply_one_change(net.front(), list, jobs);
    return;
  }
  const auto by_key = [](const PendingSlot& slot, const SlotKey& key) { return slot.key < key; };
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
  // src is read for the filled prefix only (none when the changes are past
  // it), not for the rest of the tail.
  const std::size_t tracked = from < pending_filled_ ? pending_filled_ - from : 0;
  // Keeps before[b, stop) in bulk: most of the tail between two changes.
  const auto keep_until = [&](std::size_t stop) {
    for (std::size_t k = b; k < stop && src.size() < tracked; ++k) {
      src.push_back(static_cast<std::ptrdiff_t>(from + k));
    }
    pending_mirror_.insert(pending_mirror_.end(), before.begin() + static_cast<std::ptrdiff_t>(b),
                           before.begin() + static_cast<std::ptrdiff_t>(stop));
    b = stop;
  };
  for (const Delta& delta : net) {
    keep_until(
        static_cast<std::size_t>(std::lower_bound(before.begin() + static_cast<std::ptrdiff_t>(b),
                                                  before.end(), delta.key, by_key) -
                                 before.begin()));
    const bool present = b < before.size() && before[b].key == delta.key;
    if (delta.job) {
      if (present) {
        keep_until(b + 1);  // the same key is the same job: already there
      } else {
        if (src.size() < tracked) src.push_back(-1);
        pending_mirror_.push_back(PendingSlot{delta.key, delta.job});
      }
    } else if (present) {
      ++b;  // removed
    }
  }
  keep_until(before.size());
  // Only the filled prefix of the list is kept up to date (the rest is
  // filled on demand). Within it, move the kept jobs (a left shift front to
  // back, a right shift back to front: src is increasing, so neither
  // overwrites what the other still reads), then write the jobs that were
  // not in it before, and clear what falls out of it.
  const std::size_t old_filled = pending_filled_;
  const std::size_t new_filled = std::min(old_filled, pending_mirror_.size());
  if (from >= new_filled && from >= old_filled) return;  // all past the filled part
  const auto filled_before = [&](std::size_t k) {
    return src[k] >= 0 && static_cast<std::size_t>(src[k]) < old_filled;
  };
  const auto move = [&](std::size_t k) {
    lua_rawgeti(L_, list, static_cast<lua_Integer>(src[k] + 1));
    lua_rawseti(L_, list, static_cast<lua_Integer>(from + k + 1));
  };
  const std::size_t end = new_filled > from ? new_filled - from : 0;  // new positions to keep
  for (std::size_t k = 0; k < end; ++k) {
    if (filled_before(k) && src[k] > static_cast<std::ptrdiff_t>(from + k)) move(k);
  }
  for (std::size_t k = end; k-- > 0;) {
    if (filled_before(k) && src[k] < static_cast<std::ptrdiff_t>(from + k)) move(k);
  }
  for (std::size_t k = 0; k < end; ++k) {
    if (filled_before(k)) continue;
    push_job(*pending_mirror_[from + k].job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(from + k + 1));
  }
  for (std::size_t i = new_filled; i < old_filled; ++i) {
    lua_pushnil(L_);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
  }
  pending_filled_ = new_filled;
}

void LuaRuntime::apply_one_change(const Delta& delta, int list, int jobs) {
  // The merge below for a single change, with the same Lua writes in the
  // same order, without copying the mirror's tail.
  const auto by_key = [](const PendingSlot& slot, const SlotKey& key) { return slot.key < key; };
  const auto at =
      std::lower_bound(pending_mirror_.begin(), pending_mirror_.end(), delta.key, by_key);
  const auto p = static_cast<std::size_t>(at - pending_mirror_.begin());
  const bool present = at != pending_mirror_.end() && at->key == delta.key;
  if (delta.job ? present : !present) return;  // already as the change leaves it
  const std::size_t old_filled = pending_filled_;
  if (delta.job) {
    pending_mirror_.insert(at, PendingSlot{delta.key, delta.job});
    if (p >= old_filled) return;
    // Shift the filled part right, back to front; the last one falls out.
    for (std::size_t k = old_filled; --k > p;) {
      lua_rawgeti(L_, list, static_cast<lua_Integer>(k));
      lua_rawseti(L_, list, static_cast<lua_Integer>(k + 1));
    }
    push_job(*delta.job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(p + 1));
    return;
  }
  pending_mirror_.erase(at);
  if (p >= old_filled) return;
  // Shift the filled part left, front to back; the job that moves into its
  // last position is written, or that position cleared when the list is
  // shorter than it now.
  const std::size_t new_filled = std::min(old_filled, pending_mirror_.size());
  for (std::size_t k = p; k < new_filled && k + 1 < old_filled; ++k) {
    lua_rawgeti(L_, list, static_cast<lua_Integer>(k + 2));
    lua_rawseti(L_, list, static_cast<lua_Integer>(k + 1));
  }
  if (new_filled == old_filled) {
    push_job(*pending_mirror_[new_filled - 1].job, jobs);
    lua_rawseti(L_, list, static_cast<lua_Integer>(new_filled));
  }
  for (std::size_t i = new_filled; i < old_filled; ++i) {
    lua_pushnil(L_);
    lua_rawseti(L_, list, static_cast<lua_Integer>(i + 1));
  }
  pending_filled_ = new_filled;
}

}  // namespace sched
