#include "handlers/pages.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sched/convert/wire_convert.hpp"
#include "sched/proto/fields.hpp"
#include "sched/proto/text.hpp"

namespace sched::daemon {
namespace {

constexpr std::size_t kDefaultPageItems = 1000;
// Half of what any client takes (proto::kDefaultMaxMessageBytes, 4 MiB),
// whatever schedd's own limit.
constexpr std::size_t kMaxPageBytes = 2 << 20;

// The exact size of a value's msgpack encoding (proto/fields.hpp packs it
// the same way), so that a page can be filled up to its budget and no further.
struct EncodedSize {
  std::size_t bytes = 0;

  static std::size_t header(std::size_t n, std::size_t fix) {
    return n < fix ? 1 : n < 65536 ? 3 : 5;
  }
  template <class T>
  void operator()(const char* key, const T& value) {
    if constexpr (proto::detail::is_optional<T>::value) {
      if (!value) return;
      add(std::string_view(key));
      add(*value);
    } else {
      add(std::string_view(key));
      add(value);
    }
  }
  template <class T>
  void add(const T& value) {
    if constexpr (proto::detail::HasFields<T>) {
      proto::detail::FieldCounter counter;
      const_cast<T&>(value).fields(counter);
      bytes += header(counter.count, 16);
      const_cast<T&>(value).fields(*this);
    } else if constexpr (proto::detail::is_vector<T>::value) {
      bytes += header(value.size(), 16);
      for (const auto& item : value) add(item);
    } else if constexpr (proto::detail::is_string_map<T>::value) {
      bytes += header(value.size(), 16);
      for (const auto& [key, item] : value) {
        add(std::string_view(key));
        add(item);
      }
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
      const std::size_t n = value.size();
      bytes += n + (n < 32 ? 1 : n < 256 ? 2 : n < 65536 ? 3 : 5);
    } else if constexpr (std::is_same_v<T, bool>) {
      bytes += 1;
    } else if constexpr (std::is_floating_point_v<T>) {
      // msgpack-c packs a whole number as an integer, the rest as float64.
      const double d = static_cast<double>(value);
      if (std::isfinite(d) && std::fabs(d) <= 9.2e18 && d == std::trunc(d)) {
        add(static_cast<std::int64_t>(d));
      } else {
        bytes += 9;
      }
    } else {
      const auto v = static_cast<std::int64_t>(value);
      bytes += v >= -32 && v < 128                                            ? 1
               : v >= -128 && v < 256                                         ? 2
               : v >= -32768 && v < 65536                                     ? 3
               : v >= INT32_MIN && v <= static_cast<std::int64_t>(UINT32_MAX) ? 5
                                                                              : 9;
    }
  }
};

template <class T>
std::size_t encoded_size(const T& value) {
  EncodedSize size;
  size.add(value);
  return size.bytes;
}

// Entries of one page, up to its bounds; the first always fits.
template <class Entry>
class Page {
 public:
  Page(std::vector<Entry>& entries, PageBounds bounds) : entries_(entries), bounds_(bounds) {}
  bool full() const { return entries_.size() >= bounds_.items; }
  // False (and nothing added) when the entry would take the page over its bytes.
  bool add(Entry entry) {
    const std::size_t size = encoded_size(entry);
    if (!entries_.empty() && bytes_ + size > bounds_.bytes) return false;
    bytes_ += size;
    entries_.push_back(std::move(entry));
    return true;
  }

 private:
  std::vector<Entry>& entries_;
  PageBounds bounds_;
  std::size_t bytes_ = 0;
};

[[noreturn]] void bad_cursor(const std::string& text) {
  throw proto::ProtoError(proto::code::kInvalid,
                          "cursor: '" + proto::excerpt(text) + "' is not one this server gave");
}

std::set<JobState> parse_states(const std::vector<std::string>& names) {
  std::set<JobState> states;
  for (const std::string& name : names) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const auto state = parse_job_state(upper);
    if (!state) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "unknown job state '" + proto::excerpt(name) + "'");
    }
    states.insert(*state);
  }
  return states;
}

// Reads "<tag><number>" or "<tag><number>.<number>" (the second number in
// `second`); the whole text, nothing else.
bool scan_cursor(const std::string& text, char tag, unsigned long long& first,
                 unsigned long long* second, bool hex_first = false) {
  if (text.size() < 2 || text[0] != tag) return false;
  int used = 0;
  if (second) {
    const int got = hex_first ? std::sscanf(text.c_str() + 1, "%llx.%llu%n", &first, second, &used)
                              : std::sscanf(text.c_str() + 1, "%llu.%llu%n", &first, second, &used);
    if (got != 2) return false;
  } else if (std::sscanf(text.c_str() + 1, "%llu%n", &first, &used) != 1) {
    return false;
  }
  // sscanf skips spaces and takes signs: only digits are ours.
  for (std::size_t i = 1; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!(std::isxdigit(c) || c == '.')) return false;
  }
  return static_cast<std::size_t>(used) + 1 == text.size();
}

// jobs.query's cursor (pages.hpp). A pending cursor with id 0 is the head of
// the queue (the page before ended with the last job not pending).
struct JobsCursor {
  bool pending = false;
  JobId id = 0;
  std::size_t rank = 0;
};

std::optional<JobsCursor> parse_jobs_cursor(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  unsigned long long id = 0;
  unsigned long long rank = 0;
  if (scan_cursor(*text, 'r', id, nullptr) && id > 0) return JobsCursor{false, JobId(id), 0};
  if (scan_cursor(*text, 'p', id, &rank)) return JobsCursor{true, JobId(id), std::size_t(rank)};
  bad_cursor(*text);
}

proto::JobInfo info_of(const Cluster& cluster, const StateStore& store, const Job& job,
                       int pending_rank) {
  // An ended job has given its nodes back: its journal record keeps them.
  if (is_terminal(job.state)) {
    if (auto stored = store.load_job(job.id)) return convert::job_info(job, stored->nodes);
  }
  return convert::job_info(job, cluster, pending_rank);
}

std::string node_state(const Node& node) {
  if (!node.up) return "down";
  if (node.draining) return node.job != 0 ? "draining" : "drain";
  return node.job != 0 ? "alloc" : "idle";
}

}  // namespace

PageBounds page_bounds(const std::optional<std::int64_t>& limit, const DaemonConfig& config) {
  if (limit && *limit < 1) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "limit: " + std::to_string(*limit) + " is not a page size (>= 1)");
  }
  PageBounds bounds;
  bounds.items = std::min<std::size_t>(limit ? static_cast<std::size_t>(*limit) : kDefaultPageItems,
                                       config.max_page_items);
  bounds.items = std::max<std::size_t>(bounds.items, 1);
  bounds.bytes = std::min(kMaxPageBytes, config.max_message_bytes / 2);
  return bounds;
}

proto::JobList jobs_page(const Engine& engine, const StateStore& store,
                         const proto::JobsQuery& query, PageBounds bounds) {
  const std::set<JobState> states =
      query.states ? parse_states(*query.states) : std::set<JobState>{};
  const std::optional<JobsCursor> cursor = parse_jobs_cursor(query.cursor);
  std::set<JobId> ids;
  if (query.ids) ids.insert(query.ids->begin(), query.ids->end());
  const auto wanted = [&](const Job& job) {
    if (states.empty() ? is_terminal(job.state) : !states.count(job.state)) return false;
    if (query.user && job.spec.user != *query.user) return false;
    return ids.empty() || ids.count(job.id) > 0;
  };
  const Cluster& cluster = engine.cluster();
  proto::JobList list;
  // Room for a full page at once: grown item by item, a page of 10,000 is
  // reallocated (and moved) 14 times.
  list.jobs.reserve(std::min(bounds.items, engine.jobs().size()));
  Page<proto::JobInfo> page(list.jobs, bounds);

  // Not pending (running first, by id: squeue's habit). PENDING jobs are
  // exactly those in the queue: they come after, by rank.
  if (!cursor || !cursor->pending) {
    std::vector<JobId> others;
    const auto consider = [&](const Job& job) {
      if (job.state == JobState::Pending || !wanted(job)) return;
      if (cursor && job.id <= cursor->id) return;
      others.push_back(job.id);
    };
    if (!ids.empty()) {
      for (JobId id : ids) {
        if (const Job* job = engine.find_job(id)) consider(*job);
      }
    } else {
      for (const auto& [id, job] : engine.jobs()) consider(*job);
    }
    std::sort(others.begin(), others.end());
    for (JobId id : others) {
      if (page.full() || !page.add(info_of(cluster, store, *engine.find_job(id), -1))) {
        list.next_cursor = "r" + std::to_string(list.jobs.back().id);
        return list;
      }
    }
  }
  if (!states.empty() && !states.count(JobState::Pending)) return list;

  // Pending, walked from the cursor on: a page costs its own jobs, not the
  // queue before them.
  const PendingQueue& queue = engine.pending_queue();
  const Job* head = queue.cursor().next();  // the first the policy is offered
  // Held jobs and jobs waiting for a dependency or begin time are listed too.
  PendingQueue::Cursor walk = queue.listing();
  std::size_t rank = 0;
  const Job* listed_after = nullptr;  // the cursor's job, where this page goes on
  if (cursor && cursor->pending && cursor->id != 0) {
    rank = cursor->rank;
    if (const Job* job = engine.find_job(cursor->id)) {
      walk = queue.listing_after(*job);
      listed_after = job;
    } else {
      // Gone from the engine too: go on at its rank.
      for (std::size_t i = 0; i < rank && walk.next() != nullptr; ++i) {
      }
    }
  }
  const Job* previous = listed_after;  // the last job walked
  while (const Job* job = walk.next()) {
    if (wanted(*job)) {
      // Slurm's reasons tell the head from the rest; ranks past a cursor are
      // as the queue was then.
      const int shown =
          job == head ? 0 : static_cast<int>(std::clamp<std::size_t>(rank, 1, INT32_MAX));
      if (page.full() || !page.add(info_of(cluster, store, *job, shown))) {
        list.next_cursor = "p" + std::to_string(previous ? previous->id : 0) + "." +
                           std::to_string(previous ? rank : 0);
        return list;
      }
    }
    previous = job;
    ++rank;
  }
  return list;
}

proto::JobList acct_page(const StateStore& store, const proto::AcctQuery& query,
                         PageBounds bounds) {
  AcctQuery q;
  q.user = query.user;
  if (query.states) {
    for (JobState s : parse_states(*query.states)) q.states.push_back(s);
  }
  q.since = query.since;
  q.until = query.until;
  if (query.ids) q.ids = *query.ids;
  if (query.cursor) {
    unsigned long long bits = 0;
    unsigned long long id = 0;
    if (!scan_cursor(*query.cursor, 'e', bits, &id, /*hex_first=*/true) || id == 0) {
      bad_cursor(*query.cursor);
    }
    q.after = AcctPosition{std::bit_cast<double>(static_cast<std::uint64_t>(bits)), JobId(id)};
  }
  // One more than fits tells whether another page follows.
  q.limit = bounds.items + 1;
  const std::vector<StoredJob> found = store.finished_jobs(q);
  proto::JobList list;
  Page<proto::JobInfo> page(list.jobs, bounds);
  std::size_t taken = 0;
  for (const StoredJob& stored : found) {
    if (page.full() || !page.add(convert::job_info(stored.job, stored.nodes))) break;
    ++taken;
  }
  if (taken < found.size()) {
    const Job& last = found[taken - 1].job;
    char text[64];
    std::snprintf(text, sizeof text, "e%" PRIx64 ".%" PRId64,
                  std::bit_cast<std::uint64_t>(last.end_time), static_cast<std::int64_t>(last.id));
    list.next_cursor = text;
  }
  return list;
}

proto::NodeList nodes_page(const Cluster& cluster, const proto::NodesQuery& query,
                           PageBounds bounds, const NodeDetails& details) {
  static const std::set<std::string> kStates = {"idle",  "alloc",    "mixed",
                                                "drain", "draining", "down"};
  std::set<std::string> states;
  if (query.states) {
    for (const std::string& state : *query.states) {
      if (!kStates.count(state)) {
        throw proto::ProtoError(proto::code::kInvalid,
                                "unknown node state '" + proto::excerpt(state) +
                                    "' (idle, alloc, mixed, drain, draining, down)");
      }
      states.insert(state);
    }
  }
  std::set<std::string> names;
  if (query.names) names.insert(query.names->begin(), query.names->end());
  const std::vector<Node>& nodes = cluster.nodes();
  std::size_t first = 0;
  if (query.cursor) {
    unsigned long long index = 0;
    if (!scan_cursor(*query.cursor, 'i', index, nullptr) || index >= nodes.size()) {
      bad_cursor(*query.cursor);
    }
    first = static_cast<std::size_t>(index) + 1;
  }
  proto::NodeList list;
  Page<proto::NodeInfo> page(list.nodes, bounds);
  std::size_t last = 0;
  for (std::size_t i = first; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    if (!names.empty() && !names.count(node.name)) continue;
    proto::NodeInfo info;
    info.name = node.name;
    info.state = node_state(node);
    info.cores = node.cores;
    if (node.job != 0) info.jobs.push_back(node.job);
    // After the details: they may tell "mixed" from "alloc" (invasive partitions).
    details(node, info);
    if (!states.empty() && !states.count(info.state)) continue;
    if (page.full() || !page.add(std::move(info))) {
      list.next_cursor = "i" + std::to_string(last);
      return list;
    }
    last = i;
  }
  return list;
}

}  // namespace sched::daemon
