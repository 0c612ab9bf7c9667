// Jobs: submit, cancel, and what clients ask of them (the live queue, one
// job, the accounting of ended ones).
#include <pwd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "handlers/handlers.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

std::set<JobState> parse_states(const std::vector<std::string>& names) {
  std::set<JobState> states;
  for (const std::string& name : names) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    const auto state = parse_job_state(upper);
    if (!state)
      throw proto::ProtoError(proto::code::kInvalid,
                              "unknown job state '" + proto::excerpt(name) + "'");
    states.insert(*state);
  }
  return states;
}

// Where a page of jobs.query goes on (docs/protocol.md §4): the list is the
// jobs that are not pending by id, then the pending ones in priority order;
// "r<id>" continues after the not-pending job `id`, "p<id>.<rank>" after the
// pending job `id` (or at `rank` when it is no longer pending).
struct Cursor {
  bool pending = false;
  JobId id = 0;
  std::size_t rank = 0;
};

std::optional<Cursor> parse_cursor(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  Cursor cursor;
  const std::string& t = *text;
  unsigned long long id = 0;
  unsigned long long rank = 0;
  int used = 0;
  if (t.size() > 1 && t[0] == 'r' && std::sscanf(t.c_str() + 1, "%llu%n", &id, &used) == 1 &&
      static_cast<std::size_t>(used) + 1 == t.size()) {
    cursor.id = static_cast<JobId>(id);
    return cursor;
  }
  if (t.size() > 1 && t[0] == 'p' &&
      std::sscanf(t.c_str() + 1, "%llu.%llu%n", &id, &rank, &used) == 2 &&
      static_cast<std::size_t>(used) + 1 == t.size()) {
    cursor.pending = true;
    cursor.id = static_cast<JobId>(id);
    cursor.rank = static_cast<std::size_t>(rank);
    return cursor;
  }
  throw proto::ProtoError(proto::code::kInvalid,
                          "cursor: '" + proto::excerpt(t) + "' is not one this server gave");
}

// The jobs of one page: at most `limit` (kDefaultPageJobs when not given,
// kMaxPageJobs at most), and about kPageBytes of them (half the message limit at most), well under
// the message limit whatever their nodelists and paths hold.
constexpr std::size_t kDefaultPageJobs = 1000;
constexpr std::size_t kMaxPageJobs = 10000;
constexpr std::size_t kPageBytes = 2 << 20;

std::size_t page_limit(const std::optional<std::int64_t>& limit) {
  if (!limit) return kDefaultPageJobs;
  if (*limit < 1) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "limit: " + std::to_string(*limit) + " is not a page size (>= 1)");
  }
  return std::min<std::size_t>(static_cast<std::size_t>(*limit), kMaxPageJobs);
}

// A bound of a job's encoded size (its strings, and the rest's few hundred
// bytes of keys and numbers).
std::size_t approximate_size(const proto::JobInfo& info) {
  std::size_t size = 400 + info.name.size() + info.user.size() + info.reason.size() +
                     info.workdir.size() + info.output.size();
  for (const std::string& node : info.nodelist) size += node.size() + 5;
  return size;
}

proto::JobInfo info_of(const DaemonParts& daemon, const Job& job, int pending_rank) {
  // An ended job has given its nodes back: its journal record keeps them.
  if (is_terminal(job.state)) {
    if (auto stored = daemon.store.load_job(job.id)) {
      return convert::job_info(job, stored->nodes);
    }
  }
  return convert::job_info(job, daemon.engine.cluster(), pending_rank);
}

}  // namespace

namespace {

// Root by name, or by a name that is uid 0 on this host.
bool is_root_user(const std::string& user) {
  if (user == "root") return true;
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  return ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found &&
         found->pw_uid == 0;
}

}  // namespace

void submit(const Message& m) {
  const auto body = m.body<proto::SubmitRequest>();
  StateStore& store = m.daemon.store;
  const double now = m.daemon.clock.now();
  if (body.request_id) {
    const std::string& id = *body.request_id;
    if (id.empty() || id.size() > proto::kMaxRequestIdBytes || !proto::valid_utf8(id)) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "request_id: 1 to " + std::to_string(proto::kMaxRequestIdBytes) +
                                  " bytes of UTF-8 ('" + proto::excerpt(id) + "')");
    }
    // A retry of a submission already taken: its first answer.
    if (const auto job = store.submission(id, now)) {
      m.reply(proto::SubmitReply{*job});
      return;
    }
  }
  JobSpec spec;
  if (auto error = convert::spec_from_wire(body.job, spec)) {
    throw proto::ProtoError(proto::code::kInvalid, *error);
  }
  if (spec.workdir.empty() || !std::filesystem::path(spec.workdir).is_absolute()) {
    throw proto::ProtoError(proto::code::kInvalid, "workdir must be an absolute path (got '" +
                                                       proto::excerpt(spec.workdir) + "')");
  }
  if (spec.command.empty()) throw proto::ProtoError(proto::code::kInvalid, "the script is empty");
  if (!m.daemon.config.allow_root_jobs && is_root_user(spec.user)) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "jobs of root are refused here: submit as another user (or set "
                            "allow_root_jobs in the [jobs] section of the config)");
  }
  auto submitted = m.daemon.engine.submit(std::move(spec));
  if (!submitted.ok()) throw_status(submitted.status());
  ++m.daemon.submitted;
  if (body.request_id) {
    // In the same transaction as the job: both are journaled, or neither.
    store.remember_submission(*body.request_id, submitted.value(),
                              now + proto::kSubmitRequestIdTtlS);
  }
  m.reply(proto::SubmitReply{submitted.value()});
}

void cancel(const Message& m) {
  const auto body = m.body<proto::JobRef>();
  Engine& engine = m.daemon.engine;
  // Jobs that ended before a restart are in the journal only.
  if (!engine.find_job(body.id) && m.daemon.store.load_job(body.id)) {
    throw proto::ProtoError(proto::code::kConflict,
                            "job " + std::to_string(body.id) + " has already ended");
  }
  if (const Status status = engine.cancel(body.id); !status.ok()) throw_status(status);
  m.reply(proto::Empty{});
}

void jobs_query(const Message& m) {
  const auto query = m.body<proto::JobsQuery>();
  const Engine& engine = m.daemon.engine;
  const std::set<JobState> states =
      query.states ? parse_states(*query.states) : std::set<JobState>{};
  const std::optional<Cursor> cursor = parse_cursor(query.cursor);
  const std::size_t limit = page_limit(query.limit);
  std::set<JobId> ids;
  if (query.ids) ids.insert(query.ids->begin(), query.ids->end());
  const auto wanted = [&](const Job& job) {
    if (states.empty() ? is_terminal(job.state) : !states.count(job.state)) return false;
    if (query.user && job.spec.user != *query.user) return false;
    return ids.empty() || ids.count(job.id) > 0;
  };
  // Filters first, on ids alone; JobInfo only for the page.
  const std::vector<const Job*> pending = engine.pending_jobs();
  std::vector<JobId> others;  // running first by id (squeue's habit)
  if (!cursor || !cursor->pending) {
    for (const auto& [id, job] : engine.jobs()) {
      // PENDING jobs are exactly those in the queue: they come after, by rank.
      if (job->state == JobState::Pending || !wanted(*job)) continue;
      if (cursor && id <= cursor->id) continue;
      others.push_back(id);
    }
    std::sort(others.begin(), others.end());
  }
  std::size_t first_pending = 0;
  if (cursor && cursor->pending) {
    // The page goes on at `rank`, just after the cursor's job, unless the
    // queue moved meanwhile: then after wherever that job is now.
    first_pending = std::min(cursor->rank, pending.size());
    if (first_pending == 0 || pending[first_pending - 1]->id != cursor->id) {
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (pending[i]->id == cursor->id) first_pending = i + 1;
      }
    }
  }
  proto::JobList list;
  std::size_t bytes = 0;
  const std::size_t budget = std::min(kPageBytes, m.daemon.config.max_message_bytes / 2);
  const auto full = [&] { return list.jobs.size() >= limit || bytes >= budget; };
  const auto add = [&](proto::JobInfo info) {
    bytes += approximate_size(info);
    list.jobs.push_back(std::move(info));
  };
  for (JobId id : others) {
    if (full()) {
      list.next_cursor = "r" + std::to_string(list.jobs.back().id);
      m.reply(list);
      return;
    }
    add(info_of(m.daemon, *engine.find_job(id), -1));
  }
  for (std::size_t rank = first_pending; rank < pending.size(); ++rank) {
    if (!wanted(*pending[rank])) continue;
    if (full()) {
      list.next_cursor = "p" + std::to_string(list.jobs.back().id) + "." + std::to_string(rank);
      m.reply(list);
      return;
    }
    add(info_of(m.daemon, *pending[rank], static_cast<int>(rank)));
  }
  m.reply(list);
}

void job_show(const Message& m) {
  const auto body = m.body<proto::JobRef>();
  const Engine& engine = m.daemon.engine;
  if (const Job* job = engine.find_job(body.id)) {
    int rank = -1;
    int r = 0;
    for (const Job* pending : engine.pending_jobs()) {
      if (pending->id == body.id) rank = r;
      ++r;
    }
    m.reply(proto::JobReply{info_of(m.daemon, *job, rank)});
  } else if (auto stored = m.daemon.store.load_job(body.id)) {
    m.reply(proto::JobReply{convert::job_info(stored->job, stored->nodes)});
  } else {
    throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
  }
}

void acct(const Message& m) {
  const auto query = m.body<proto::AcctQuery>();
  AcctQuery q;
  q.user = query.user;
  if (query.states) {
    for (JobState s : parse_states(*query.states)) q.states.push_back(s);
  }
  q.since = query.since;
  q.until = query.until;
  if (query.ids) q.ids = *query.ids;
  if (query.limit) q.limit = static_cast<std::size_t>(std::max<std::int64_t>(*query.limit, 1));
  proto::JobList list;
  for (const StoredJob& stored : m.daemon.store.finished_jobs(q)) {
    list.jobs.push_back(convert::job_info(stored.job, stored.nodes));
  }
  m.reply(list);
}

}  // namespace sched::daemon::handlers
