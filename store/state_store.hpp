// The state journal: jobs, their allocations (as node names) and the event
// journal in one SQLite file (WAL mode), so that schedd picks up where it was
// after a restart, even after SIGKILL. A committed write survives the death of
// the process; with synchronous=NORMAL the last commits may be lost on power
// loss, which a restart then sees as an older, consistent state.
//
// One StateStore is used by one thread; two daemons must not share a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/event.hpp"
#include "sched/job.hpp"

namespace sched {

// A job as the store gives it back. job.allocation is empty: node indices
// differ between runs, so the daemon maps `nodes` to its own indices.
struct StoredJob {
  Job job;
  std::vector<std::string> nodes;  // the allocation as node names; first = leader
};

// Where a page of finished jobs ends: the (end time, id) of its last job.
struct AcctPosition {
  double end_time = 0;
  JobId id = 0;
};

// Which finished jobs `sched acct` asks for (like sacct's filters).
struct AcctQuery {
  std::optional<std::string> user;
  std::vector<JobState> states;        // empty: any terminal state; non-terminal ones match nothing
  std::optional<double> since, until;  // end_time in [since, until) (epoch seconds)
  std::vector<JobId> ids;              // empty: any
  std::size_t limit = 1000;            // 0: no limit; the earliest ends are kept
  std::optional<AcctPosition> after;   // only the jobs after this one in (end time, id) order
};

// ---- issue 22: a deployed policy version, with the text of every file it
// loaded, so that a rollback works whatever happened to the files since.
struct PolicyVersionFile {
  std::string name;  // "fcfs.lua", "lib/easy.lua"
  std::string path;  // where it was read
  std::string text;
};
struct PolicyVersionRecord {
  std::uint64_t version = 0;  // set by append_policy_version: 1, 2, ...
  double time = 0;
  std::string user;  // who deployed it
  std::string how;   // load, reload, set, rollback to N, revert to N
  std::string name;  // the policy's name
  std::string path;  // the policy file it was loaded from
  std::string hash;  // over every file's name and text
  std::map<std::string, std::string> params;
  std::vector<PolicyVersionFile> files;  // the policy file first
  // The partition whose own policy it is (issue 20 item 1); "": the
  // [scheduler] policy.
  std::string partition;
};

// Every failure: the message names the database file, what was being done and
// SQLite's own words.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StateStore {
 public:
  // Opens or creates the database file; its directory must exist. Sets WAL
  // mode, synchronous=NORMAL and a busy timeout, and refuses a file that is
  // not a sched state database or has a schema this build does not know.
  static std::unique_ptr<StateStore> open(const std::string& path);
  ~StateStore();  // rolls back a transaction still open
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  const std::string& path() const;

  // Groups writes into one transaction (the daemon commits once per loop
  // iteration); a write outside begin/commit is its own transaction.
  // Transactions do not nest.
  void begin();
  void commit();
  void rollback();  // drops the writes since begin(); nothing to do without one
  bool in_transaction() const;

  // Inserts or updates everything about the job. node_names are the names of
  // job.allocation's nodes, in the same order (so the sizes must match).
  void save_job(const Job& job, const std::vector<std::string>& node_names);
  std::optional<StoredJob> load_job(JobId id) const;  // in any state
  std::vector<StoredJob> load_active_jobs() const;    // every non-terminal job, by id
  JobId max_job_id() const;  // the highest id ever saved (0 if none): ids are never reused
  // Terminal jobs matching the query, by end time, then id.
  std::vector<StoredJob> finished_jobs(const AcctQuery& query) const;

  // The event journal. Sequence numbers are unique: appending one that is
  // already there is an error (a restarted daemon continues after
  // last_event_seq()).
  void append_event(const Event& event);
  std::vector<Event> events_after(std::uint64_t seq, std::size_t limit) const;  // limit 0: all
  std::uint64_t last_event_seq() const;                                         // 0 if none

  // Small settings that outlive a restart (the power corridor, ...).
  void set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key) const;

  // Submissions by the request id their client chose, so that a retried
  // submit gets the first answer (docs/protocol.md §4). A mapping counts
  // until `expires` (epoch seconds); submission() sees only live ones, and
  // forget_submissions() deletes those expired by `now`.
  void remember_submission(const std::string& request_id, JobId job, double expires);
  std::optional<JobId> submission(const std::string& request_id, double now) const;
  void forget_submissions(double now);

  // ---- issue 22: the journal of deployed policy versions (append only; the
  // last one is the one running). Returns the version number given.
  std::uint64_t append_policy_version(PolicyVersionRecord record);
  std::vector<PolicyVersionRecord> policy_versions() const;  // oldest first
  // One version, without reading the others (each carries its files' text).
  std::optional<PolicyVersionRecord> policy_version(std::uint64_t version) const;
  // The last of the [scheduler] policy ("") or of a partition's own, below
  // version `before` when given.
  std::optional<PolicyVersionRecord> last_policy_version(
      const std::string& partition = {},
      std::uint64_t before = std::numeric_limits<std::uint64_t>::max()) const;
  // The last version number of each partition ("": [scheduler]), without
  // reading any version's files.
  std::map<std::string, std::uint64_t> policy_version_heads() const;

  // The schema this build writes (PRAGMA user_version). Opening a file of
  // schema 1 upgrades it in place (events' value/value2 become named fields;
  // the submissions table is added); schema 2 gains the policy_versions table;
  // schema 3 its partition column.
  static constexpr int kSchemaVersion = 4;

 private:
  struct Impl;
  explicit StateStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sched
