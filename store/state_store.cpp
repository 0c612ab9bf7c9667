#include "state_store.hpp"

#include <array>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "job_codec.hpp"
#include "sqlite_db.hpp"

namespace sched {
namespace {

// PRAGMA application_id: tells our files from other SQLite databases.
constexpr std::int64_t kApplicationId = 0x73636864;  // "schd"
constexpr int kBusyTimeoutMs = 5000;
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// Key fields are columns, so that acct filters are SQL; the rest of a job is
// JSON (see job_codec.hpp). Times are REAL epoch seconds. An event's fields
// that belong to its topic alone (expected_start, lower_w, pass_s, code, ...)
// are a JSON object in `fields` (encode_event_fields), so that a field added
// to a topic needs no schema change. Submissions are remembered by their
// client's request id (exactly-once submit) until they expire.
const std::string kSubmissionsTable = R"sql(
CREATE TABLE submissions (
  request_id TEXT PRIMARY KEY,
  job INTEGER NOT NULL,
  expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX submissions_by_expiry ON submissions (expires);
)sql";
// ---- issue 22: deployed policy versions; params (key → text) and files
// ([{name, path, text}]) are JSON.
const std::string kPolicyVersionsTable = R"sql(
CREATE TABLE policy_versions (
  version INTEGER PRIMARY KEY,
  time REAL NOT NULL,
  user TEXT NOT NULL,
  how TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  hash TEXT NOT NULL,
  params TEXT NOT NULL,
  files TEXT NOT NULL
);
)sql";
const std::string kSchema = R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  user TEXT NOT NULL,
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  submit_time REAL,
  start_time REAL,
  end_time REAL,
  exit_status INTEGER NOT NULL,
  nodes TEXT NOT NULL,
  spec TEXT NOT NULL,
  progress TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, end_time);
CREATE INDEX jobs_by_user ON jobs (user, end_time);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  time REAL,
  type TEXT NOT NULL,
  job INTEGER NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  nodes INTEGER NOT NULL,
  prev_nodes INTEGER NOT NULL,
  node TEXT NOT NULL,
  message TEXT NOT NULL,
  fields TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
)sql" + kSubmissionsTable + kPolicyVersionsTable;

constexpr const char* kJobColumns =
    "id, name, user, kind, state, submit_time, start_time, end_time, exit_status, nodes, spec, "
    "progress";

const std::string kUpsertJob = std::string("INSERT INTO jobs (") + kJobColumns +
                               ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
                               "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                               "user = excluded.user, kind = excluded.kind, "
                               "state = excluded.state, submit_time = excluded.submit_time, "
                               "start_time = excluded.start_time, end_time = excluded.end_time, "
                               "exit_status = excluded.exit_status, nodes = excluded.nodes, "
                               "spec = excluded.spec, progress = excluded.progress";
const std::string kSelectJob = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?1";
// ?1: a JSON array of the terminal state names.
const std::string kSelectActive =
    std::string("SELECT ") + kJobColumns +
    " FROM jobs WHERE state NOT IN (SELECT value FROM json_each(?1)) ORDER BY id";
// ?1 states (JSON array), ?2 user, ?3 since, ?4 until, ?5 ids (JSON array),
// ?6 limit (-1: none), ?7 and ?8 the (end_time, id) a page goes on after; a
// NULL parameter does not filter. A page is a keyset range of jobs_by_end,
// not an OFFSET: each costs its own rows, wherever it is in the list.
const std::string kSelectFinished = std::string("SELECT ") + kJobColumns +
                                    " FROM jobs WHERE state IN (SELECT value FROM json_each(?1))"
                                    " AND (?2 IS NULL OR user = ?2)"
                                    " AND (?3 IS NULL OR end_time >= ?3)"
                                    " AND (?4 IS NULL OR end_time < ?4)"
                                    " AND (?5 IS NULL OR id IN (SELECT value FROM json_each(?5)))"
                                    " AND (?7 IS NULL OR (end_time, id) > (?7, ?8))"
                                    " ORDER BY end_time, id LIMIT ?6";
const std::string kMaxJobId = "SELECT COALESCE(MAX(id), 0) FROM jobs";

// Schema 1 kept two anonymous numbers per event (value, value2); schema 2
// names them per topic in `fields`. Old rows get the names their topic gives
// the numbers; a sched.pass row also moves its action count (nodes) and its
// reason (message) there. A NULL value read as 0 before, and still does.
// Schema 2 also has the submissions table.
const std::string kMigrate1To2 = kSubmissionsTable + R"sql(
ALTER TABLE events ADD COLUMN fields TEXT NOT NULL DEFAULT '{}';
UPDATE events SET fields = json_object('expected_start', COALESCE(value, 0))
  WHERE type = 'job.reserved';
UPDATE events SET fields = json_object('lower_w', COALESCE(value, 0), 'upper_w', COALESCE(value2, 0))
  WHERE type = 'power.corridor';
UPDATE events SET fields = json_object('pass_s', COALESCE(value, 0), 'actions', nodes,
                                       'reason', message), nodes = 0, message = ''
  WHERE type = 'sched.pass';
ALTER TABLE events DROP COLUMN value;
ALTER TABLE events DROP COLUMN value2;
)sql";

// Schema 3 adds the journal of deployed policy versions.
const std::string kMigrate2To3 = kPolicyVersionsTable;
// Schema 4: a version belongs to a partition's own policy, or ("") to the
// [scheduler] policy (issue 20 item 1). A new file is made as schema 3 and
// upgraded, so that both have the same table.
const std::string kMigrate3To4 =
    "ALTER TABLE policy_versions ADD COLUMN partition TEXT NOT NULL DEFAULT '';";
const std::string kInsertPolicyVersion =
    "INSERT INTO policy_versions (time, user, how, name, path, hash, params, files, partition) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const std::string kSelectPolicyVersionColumns =
    "SELECT version, time, user, how, name, path, hash, params, files, partition "
    "FROM policy_versions ";
const std::string kSelectPolicyVersions = kSelectPolicyVersionColumns + "ORDER BY version";
const std::string kSelectPolicyVersion = kSelectPolicyVersionColumns + "WHERE version = ?1";
const std::string kSelectLastPolicyVersion =
    kSelectPolicyVersionColumns +
    "WHERE partition = ?1 AND version < ?2 ORDER BY version DESC LIMIT 1";
const std::string kSelectPolicyVersionHeads =
    "SELECT partition, MAX(version) FROM policy_versions GROUP BY partition";

const std::string kInsertEvent =
    "INSERT INTO events (seq, time, type, job, from_state, to_state, nodes, prev_nodes, node, "
    "message, fields) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
const std::string kSelectEvents =
    "SELECT seq, time, type, job, from_state, to_state, nodes, prev_nodes, node, message, fields "
    "FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2";
const std::string kLastEventSeq = "SELECT COALESCE(MAX(seq), 0) FROM events";

const std::string kUpsertMeta =
    "INSERT INTO meta (key, value) VALUES (?1, ?2) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const std::string kSelectMeta = "SELECT value FROM meta WHERE key = ?1";

// acct's order, for its pages: every file gets it at open (an index only
// speeds reads, so a journal of an older build needs no migration for it).
constexpr const char* kJobsByEndIndex =
    "CREATE INDEX IF NOT EXISTS jobs_by_end ON jobs (end_time, id);";
const std::string kInsertSubmission =
    "INSERT INTO submissions (request_id, job, expires) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (request_id) DO UPDATE SET job = excluded.job, expires = excluded.expires";
const std::string kSelectSubmission =
    "SELECT job FROM submissions WHERE request_id = ?1 AND expires > ?2";
const std::string kExpireSubmissions = "DELETE FROM submissions WHERE expires <= ?1";

const std::string kBegin = "BEGIN IMMEDIATE";  // take the write lock now, not at the first write
const std::string kCommit = "COMMIT";
const std::string kRollback = "ROLLBACK";

constexpr std::array kAllStates = {JobState::Pending,  JobState::Starting,   JobState::Running,
                                   JobState::Adapting, JobState::Completing, JobState::Completed,
                                   JobState::Failed,   JobState::Cancelled,  JobState::Timeout,
                                   JobState::Suspended};

std::string state_names(const std::vector<JobState>& states) {
  std::vector<std::string> names;
  for (JobState state : states) names.emplace_back(to_string(state));
  return store::encode_strings(names);
}

const std::string& terminal_state_names() {
  static const std::string names = [] {
    std::vector<JobState> terminal;
    for (JobState state : kAllStates) {
      if (is_terminal(state)) terminal.push_back(state);
    }
    return state_names(terminal);
  }();
  return names;
}

std::optional<EventType> parse_event_type(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(EventType::SchedPass); ++i) {
    if (topic(static_cast<EventType>(i)) == text) return static_cast<EventType>(i);
  }
  return std::nullopt;
}

std::int64_t sql_limit(std::size_t limit) {
  if (limit == 0) return -1;  // SQLite: no limit
  return limit > static_cast<std::size_t>(kMaxInt64) ? kMaxInt64 : static_cast<std::int64_t>(limit);
}

template <typename Enum>
Enum parse_column(std::optional<Enum> value, const char* what, const std::string& text) {
  if (!value) throw store::CodecError(std::string("unknown ") + what + " '" + text + "'");
  return *value;
}

StoredJob read_job(const store::Statement& row) {
  StoredJob stored;
  Job& job = stored.job;
  job.id = row.column_int(0);
  try {
    job.spec.name = row.column_text(1);
    job.spec.user = row.column_text(2);
    const std::string kind = row.column_text(3);
    job.spec.kind = parse_column(parse_job_kind(kind), "kind", kind);
    const std::string state = row.column_text(4);
    job.state = parse_column(parse_job_state(state), "state", state);
    job.submit_time = row.column_double(5);
    job.start_time = row.column_double(6);
    job.end_time = row.column_double(7);
    job.exit_status = static_cast<int>(row.column_int(8));
    stored.nodes = store::decode_strings(row.column_text(9));
    store::decode_spec(row.column_text(10), job.spec);
    store::decode_progress(row.column_text(11), job);
  } catch (const store::CodecError& e) {
    throw store::CodecError("job " + std::to_string(job.id) + ": " + e.what());
  }
  return stored;
}

Event read_event(const store::Statement& row) {
  Event event;
  event.seq = static_cast<std::uint64_t>(row.column_int(0));
  try {
    event.time = row.column_double(1);
    const std::string type = row.column_text(2);
    event.type = parse_column(parse_event_type(type), "event type", type);
    event.job = row.column_int(3);
    const std::string from = row.column_text(4);
    event.from = parse_column(parse_job_state(from), "state", from);
    const std::string to = row.column_text(5);
    event.to = parse_column(parse_job_state(to), "state", to);
    event.nodes = static_cast<int>(row.column_int(6));
    event.prev_nodes = static_cast<int>(row.column_int(7));
    event.node = row.column_text(8);
    event.message = row.column_text(9);
    store::decode_event_fields(row.column_text(10), event);
  } catch (const store::CodecError& e) {
    throw store::CodecError("event " + std::to_string(event.seq) + ": " + e.what());
  }
  return event;
}

// A clearer message than SQLite's "unable to open database file" for the
// usual mistakes.
void check_location(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw StoreError("state store: no database path given");
  if (path == ":memory:") return;
  const std::string prefix = "state store '" + path + "': ";
  const fs::path file(path);
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (!fs::exists(status)) {
    throw StoreError(prefix + "directory '" + dir.string() + "' " +
                     (error && status.type() != fs::file_type::not_found
                          ? "cannot be examined: " + error.message()
                          : std::string("does not exist (create it first)")));
  }
  if (!fs::is_directory(status)) {
    throw StoreError(prefix + "'" + dir.string() + "' is not a directory");
  }
  if (fs::is_directory(file, error)) {
    throw StoreError(prefix + "is a directory, not a database file");
  }
}

// Creates the schema in an empty file, or checks that the file holds ours.
// Runs inside a write transaction, so two processes cannot both create it.
void check_or_create_schema(store::Database& db, const std::string& prefix) {
  const std::int64_t application_id = db.query_int("PRAGMA application_id");
  const std::int64_t version = db.query_int("PRAGMA user_version");
  const std::int64_t objects = db.query_int("SELECT count(*) FROM sqlite_master");
  if (application_id == 0 && version == 0 && objects == 0) {
    db.exec(kSchema.c_str());
    db.exec(kMigrate3To4.c_str());
    db.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
    db.exec(("PRAGMA user_version = " + std::to_string(StateStore::kSchemaVersion)).c_str());
    return;
  }
  if (application_id != kApplicationId) {
    throw StoreError(prefix + "not a sched state database (an SQLite file with " +
                     std::to_string(objects) + " tables and indexes of something else)");
  }
  if (version > StateStore::kSchemaVersion) {
    throw StoreError(prefix + "schema version " + std::to_string(version) +
                     " is newer than this build of sched understands (" +
                     std::to_string(StateStore::kSchemaVersion) +
                     "); run a newer sched or use another file");
  }
  if (version >= 1 && version < StateStore::kSchemaVersion) {
    if (version < 2) db.exec(kMigrate1To2.c_str());
    if (version < 3) db.exec(kMigrate2To3.c_str());
    if (version < 4) db.exec(kMigrate3To4.c_str());
    db.exec(("PRAGMA user_version = " + std::to_string(StateStore::kSchemaVersion)).c_str());
    return;
  }
  if (version < StateStore::kSchemaVersion) {
    throw StoreError(prefix + "schema version " + std::to_string(version) +
                     " is older than this build's (" + std::to_string(StateStore::kSchemaVersion) +
                     ") and cannot be upgraded");
  }
}

// One row of kSelectPolicyVersionColumns.
PolicyVersionRecord policy_version_row(const store::Statement& q) {
  PolicyVersionRecord record;
  record.version = static_cast<std::uint64_t>(q.column_int(0));
  record.time = q.column_double(1);
  record.user = q.column_text(2);
  record.how = q.column_text(3);
  record.name = q.column_text(4);
  record.path = q.column_text(5);
  record.hash = q.column_text(6);
  record.partition = q.column_text(9);
  const auto params = nlohmann::json::parse(q.column_text(7), nullptr, false);
  const auto files = nlohmann::json::parse(q.column_text(8), nullptr, false);
  if (!params.is_object() || !files.is_array()) {
    throw store::CodecError("policy version " + std::to_string(record.version) +
                            ": params or files are not JSON");
  }
  for (const auto& [key, value] : params.items()) {
    record.params[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  for (const auto& file : files) {
    record.files.push_back(
        {file.value("name", ""), file.value("path", ""), file.value("text", "")});
  }
  return record;
}

}  // namespace

struct StateStore::Impl {
  explicit Impl(const std::string& file) : path(file), db(file) {}

  std::string prefix() const { return "state store '" + path + "': "; }

  // Runs `work`, turning SQLite and decoding failures into a StoreError that
  // says where and what was being done.
  template <typename Work>
  auto guarded(const std::string& doing, Work&& work) -> decltype(work()) {
    try {
      return work();
    } catch (const store::SqliteError& e) {
      throw StoreError(prefix() + doing + ": " + e.what());
    } catch (const store::CodecError& e) {
      throw StoreError(prefix() + doing + ": " + e.what());
    }
  }

  void run(const std::string& sql) {
    auto statement = db.prepared(sql);
    while (statement->step()) {
    }
  }

  std::vector<StoredJob> jobs(store::Statement& statement) {
    std::vector<StoredJob> jobs;
    while (statement.step()) jobs.push_back(read_job(statement));
    return jobs;
  }

  std::string path;
  store::Database db;
};

StateStore::StateStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StateStore::~StateStore() = default;  // closing rolls back an open transaction

std::unique_ptr<StateStore> StateStore::open(const std::string& path) {
  check_location(path);
  const std::string prefix = "state store '" + path + "': ";
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(path);
    store::Database& db = impl->db;
    db.exec(("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs)).c_str());
    // On failure the connection closes with impl, which rolls this back.
    db.exec("BEGIN IMMEDIATE");
    check_or_create_schema(db, prefix);
    db.exec(kJobsByEndIndex);
    db.exec("COMMIT");
    // Not inside a transaction: SQLite cannot change the journal mode there.
    const std::string mode = db.query_text("PRAGMA journal_mode = WAL");
    if (mode != "wal" && !(path == ":memory:" && mode == "memory")) {
      throw StoreError(prefix + "cannot use a write-ahead log (journal mode is '" + mode +
                       "'; is the file on a network file system?)");
    }
    // In WAL mode a commit survives a crash of the process without an fsync.
    db.exec("PRAGMA synchronous = NORMAL");
  } catch (const store::SqliteError& e) {
    if (e.code() == SQLITE_NOTADB) {
      throw StoreError(prefix + "the file is not an SQLite database (" + e.what() + ")");
    }
    throw StoreError(prefix + "opening: " + e.what());
  }
  return std::unique_ptr<StateStore>(new StateStore(std::move(impl)));
}

const std::string& StateStore::path() const { return impl_->path; }

void StateStore::begin() {
  if (in_transaction()) throw StoreError(impl_->prefix() + "begin: a transaction is already open");
  impl_->guarded("beginning a transaction", [&] { impl_->run(kBegin); });
}

void StateStore::commit() {
  if (!in_transaction()) throw StoreError(impl_->prefix() + "commit: no transaction is open");
  impl_->guarded("committing", [&] { impl_->run(kCommit); });
}

void StateStore::rollback() {
  if (!in_transaction()) return;
  impl_->guarded("rolling back", [&] { impl_->run(kRollback); });
}

bool StateStore::in_transaction() const { return impl_->db.in_transaction(); }

void StateStore::save_job(const Job& job, const std::vector<std::string>& node_names) {
  const std::string doing = "saving job " + std::to_string(job.id);
  if (node_names.size() != job.allocation.size()) {
    throw StoreError(impl_->prefix() + doing + ": " + std::to_string(node_names.size()) +
                     " node names for an allocation of " + std::to_string(job.allocation.size()) +
                     " nodes");
  }
  impl_->guarded(doing, [&] {
    auto q = impl_->db.prepared(kUpsertJob);
    q->bind_int(1, job.id);
    q->bind_text(2, job.spec.name);
    q->bind_text(3, job.spec.user);
    q->bind_text(4, to_string(job.spec.kind));
    q->bind_text(5, to_string(job.state));
    q->bind_double(6, job.submit_time);
    q->bind_double(7, job.start_time);
    q->bind_double(8, job.end_time);
    q->bind_int(9, job.exit_status);
    q->bind_text(10, store::encode_strings(node_names));
    q->bind_text(11, store::encode_spec(job.spec));
    q->bind_text(12, store::encode_progress(job));
    q->step();
  });
}

std::optional<StoredJob> StateStore::load_job(JobId id) const {
  return impl_->guarded("loading job " + std::to_string(id), [&]() -> std::optional<StoredJob> {
    auto q = impl_->db.prepared(kSelectJob);
    q->bind_int(1, id);
    if (!q->step()) return std::nullopt;
    return read_job(*q);
  });
}

std::vector<StoredJob> StateStore::load_active_jobs() const {
  return impl_->guarded("loading active jobs", [&] {
    auto q = impl_->db.prepared(kSelectActive);
    q->bind_text(1, terminal_state_names());
    return impl_->jobs(*q);
  });
}

JobId StateStore::max_job_id() const {
  return impl_->guarded("reading the highest job id", [&] {
    auto q = impl_->db.prepared(kMaxJobId);
    q->step();
    return q->column_int(0);
  });
}

std::vector<StoredJob> StateStore::finished_jobs(const AcctQuery& query) const {
  std::vector<JobState> states;
  for (JobState state :
       query.states.empty() ? std::vector(kAllStates.begin(), kAllStates.end()) : query.states) {
    if (is_terminal(state)) states.push_back(state);
  }
  if (states.empty()) return {};
  return impl_->guarded("querying finished jobs", [&] {
    auto q = impl_->db.prepared(kSelectFinished);
    q->bind_text(1, state_names(states));
    if (query.user) q->bind_text(2, *query.user);
    if (query.since) q->bind_double(3, *query.since);
    if (query.until) q->bind_double(4, *query.until);
    if (!query.ids.empty()) q->bind_text(5, store::encode_ids(query.ids));
    q->bind_int(6, sql_limit(query.limit));
    if (query.after) {
      q->bind_double(7, query.after->end_time);
      q->bind_int(8, query.after->id);
    }
    return impl_->jobs(*q);
  });
}

void StateStore::append_event(const Event& event) {
  const std::string doing = "appending event " + std::to_string(event.seq);
  if (event.seq > static_cast<std::uint64_t>(kMaxInt64)) {
    throw StoreError(impl_->prefix() + doing + ": sequence number out of range");
  }
  impl_->guarded(doing, [&] {
    auto q = impl_->db.prepared(kInsertEvent);
    q->bind_int(1, static_cast<std::int64_t>(event.seq));
    q->bind_double(2, event.time);
    q->bind_text(3, topic(event.type));
    q->bind_int(4, event.job);
    q->bind_text(5, to_string(event.from));
    q->bind_text(6, to_string(event.to));
    q->bind_int(7, event.nodes);
    q->bind_int(8, event.prev_nodes);
    q->bind_text(9, event.node);
    q->bind_text(10, event.message);
    q->bind_text(11, store::encode_event_fields(event));
    q->step();
  });
}

std::vector<Event> StateStore::events_after(std::uint64_t seq, std::size_t limit) const {
  if (seq >= static_cast<std::uint64_t>(kMaxInt64)) return {};
  return impl_->guarded("reading events after " + std::to_string(seq), [&] {
    auto q = impl_->db.prepared(kSelectEvents);
    q->bind_int(1, static_cast<std::int64_t>(seq));
    q->bind_int(2, sql_limit(limit));
    std::vector<Event> events;
    while (q->step()) events.push_back(read_event(*q));
    return events;
  });
}

std::uint64_t StateStore::last_event_seq() const {
  return impl_->guarded("reading the last event", [&] {
    auto q = impl_->db.prepared(kLastEventSeq);
    q->step();
    return static_cast<std::uint64_t>(q->column_int(0));
  });
}

void StateStore::set_meta(const std::string& key, const std::string& value) {
  impl_->guarded("setting '" + key + "'", [&] {
    auto q = impl_->db.prepared(kUpsertMeta);
    q->bind_text(1, key);
    q->bind_text(2, value);
    q->step();
  });
}

std::uint64_t StateStore::append_policy_version(PolicyVersionRecord record) {
  return impl_->guarded("journaling policy version " + record.name, [&] {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [key, value] : record.params) params[key] = value;
    nlohmann::json files = nlohmann::json::array();
    for (const PolicyVersionFile& file : record.files) {
      files.push_back({{"name", file.name}, {"path", file.path}, {"text", file.text}});
    }
    auto q = impl_->db.prepared(kInsertPolicyVersion);
    q->bind_double(1, record.time);
    q->bind_text(2, record.user);
    q->bind_text(3, record.how);
    q->bind_text(4, record.name);
    q->bind_text(5, record.path);
    q->bind_text(6, record.hash);
    q->bind_text(7, params.dump());
    q->bind_text(8, files.dump());
    q->bind_text(9, record.partition);
    q->step();
    return static_cast<std::uint64_t>(impl_->db.query_int("SELECT last_insert_rowid()"));
  });
}

std::vector<PolicyVersionRecord> StateStore::policy_versions() const {
  return impl_->guarded("reading the policy versions", [&] {
    std::vector<PolicyVersionRecord> versions;
    auto q = impl_->db.prepared(kSelectPolicyVersions);
    while (q->step()) versions.push_back(policy_version_row(*q));
    return versions;
  });
}

std::optional<PolicyVersionRecord> StateStore::policy_version(std::uint64_t version) const {
  return impl_->guarded("reading policy version " + std::to_string(version),
                        [&]() -> std::optional<PolicyVersionRecord> {
                          auto q = impl_->db.prepared(kSelectPolicyVersion);
                          q->bind_int(1, static_cast<std::int64_t>(version));
                          if (!q->step()) return std::nullopt;
                          return policy_version_row(*q);
                        });
}

std::optional<PolicyVersionRecord> StateStore::last_policy_version(const std::string& partition,
                                                                   std::uint64_t before) const {
  return impl_->guarded("reading the last policy version",
                        [&]() -> std::optional<PolicyVersionRecord> {
                          auto q = impl_->db.prepared(kSelectLastPolicyVersion);
                          q->bind_text(1, partition);
                          q->bind_int(2, before > static_cast<std::uint64_t>(kMaxInt64)
                                             ? kMaxInt64
                                             : static_cast<std::int64_t>(before));
                          if (!q->step()) return std::nullopt;
                          return policy_version_row(*q);
                        });
}

std::map<std::string, std::uint64_t> StateStore::policy_version_heads() const {
  return impl_->guarded("reading the current policy versions", [&] {
    std::map<std::string, std::uint64_t> heads;
    auto q = impl_->db.prepared(kSelectPolicyVersionHeads);
    while (q->step()) heads[q->column_text(0)] = static_cast<std::uint64_t>(q->column_int(1));
    return heads;
  });
}

std::optional<std::string> StateStore::meta(const std::string& key) const {
  return impl_->guarded("reading '" + key + "'", [&]() -> std::optional<std::string> {
    auto q = impl_->db.prepared(kSelectMeta);
    q->bind_text(1, key);
    if (!q->step()) return std::nullopt;
    return q->column_text(0);
  });
}

}  // namespace sched

namespace sched {

void StateStore::remember_submission(const std::string& request_id, JobId job, double expires) {
  impl_->guarded("recording request " + request_id, [&] {
    auto q = impl_->db.prepared(kInsertSubmission);
    q->bind_text(1, request_id);
    q->bind_int(2, job);
    q->bind_double(3, expires);
    q->step();
  });
}

std::optional<JobId> StateStore::submission(const std::string& request_id, double now) const {
  return impl_->guarded("reading request " + request_id, [&]() -> std::optional<JobId> {
    auto q = impl_->db.prepared(kSelectSubmission);
    q->bind_text(1, request_id);
    q->bind_double(2, now);
    if (!q->step()) return std::nullopt;
    return q->column_int(0);
  });
}

void StateStore::forget_submissions(double now) {
  impl_->guarded("forgetting expired requests", [&] {
    auto q = impl_->db.prepared(kExpireSubmissions);
    q->bind_double(1, now);
    q->step();
  });
}

}  // namespace sched
