// StateStore: the SQLite state journal that lets schedd survive a restart.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "state_store.hpp"

namespace sched {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// Counts an aggregate's fields, so that a field added to Job, JobSpec or
// Event fails a test here until the store saves it and the comparisons below
// check it.
struct AnyField {
  template <typename T>
  operator T() const {
    return T{};  // never run: only asked whether it would convert
  }
};
template <typename T, typename... Fields>
consteval std::size_t field_count() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return field_count<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

// Exact equality, with NaN equal to NaN (a NaN must come back as one).
void expect_same(double expected, double actual, const char* field) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << field << " = " << actual;
  } else {
    EXPECT_EQ(expected, actual) << field;
  }
}

void expect_same(const std::optional<double>& expected, const std::optional<double>& actual,
                 const char* field) {
  ASSERT_EQ(expected.has_value(), actual.has_value()) << field;
  if (expected) expect_same(*expected, *actual, field);
}

void expect_same_spec(const JobSpec& expected, const JobSpec& actual) {
  EXPECT_EQ(expected.name, actual.name);
  EXPECT_EQ(expected.user, actual.user);
  EXPECT_EQ(expected.kind, actual.kind);
  EXPECT_EQ(expected.nodes, actual.nodes);
  EXPECT_EQ(expected.min_nodes, actual.min_nodes);
  EXPECT_EQ(expected.max_nodes, actual.max_nodes);
  EXPECT_EQ(expected.constraint, actual.constraint);
  EXPECT_EQ(expected.tasks_per_node, actual.tasks_per_node);
  expect_same(expected.walltime, actual.walltime, "walltime");
  expect_same(expected.power_min_w, actual.power_min_w, "power_min_w");
  expect_same(expected.power_max_w, actual.power_max_w, "power_max_w");
  EXPECT_EQ(expected.urgent, actual.urgent);
  EXPECT_EQ(expected.command, actual.command);
  EXPECT_EQ(expected.workdir, actual.workdir);
  EXPECT_EQ(expected.extra->output, actual.extra->output);
  EXPECT_EQ(expected.extra->environment, actual.extra->environment);
  EXPECT_EQ(expected.extra->mem_bytes, actual.extra->mem_bytes);
  // ---- issue 18 item 2
  EXPECT_EQ(expected.extra->dependency, actual.extra->dependency);
  expect_same(expected.extra->begin_time, actual.extra->begin_time, "begin_time");
  EXPECT_EQ(expected.hold, actual.hold);
  EXPECT_EQ(expected.extra->error, actual.extra->error);
  EXPECT_EQ(expected.extra->args, actual.extra->args);
  // ---- priority (issue 18 item 5)
  EXPECT_EQ(expected.extra->account, actual.extra->account);
  EXPECT_EQ(expected.qos, actual.qos);
  EXPECT_EQ(expected.nice, actual.nice);
  // ---- issue 18 item 4
  EXPECT_EQ(expected.extra->nodelist, actual.extra->nodelist);
  EXPECT_EQ(expected.extra->exclude, actual.extra->exclude);
  EXPECT_EQ(expected.extra->gpus_per_node, actual.extra->gpus_per_node);
  // ---- job arrays (issue 18 item 1)
  EXPECT_EQ(expected.extra->array, actual.extra->array);
  EXPECT_EQ(expected.extra->array_job_id, actual.extra->array_job_id);
  EXPECT_EQ(expected.extra->array_task_id, actual.extra->array_task_id);
  EXPECT_EQ(expected.extra->array_throttle, actual.extra->array_throttle);
  // ---- tasks (issue 16 item 1)
  EXPECT_EQ(expected.layout->ntasks, actual.layout->ntasks);
  EXPECT_EQ(expected.layout->nodes_from_tasks, actual.layout->nodes_from_tasks);
  EXPECT_EQ(expected.layout->cpus_per_task, actual.layout->cpus_per_task);
  EXPECT_EQ(expected.layout->distribution, actual.layout->distribution);
  EXPECT_EQ(expected.layout->cpu_bind, actual.layout->cpu_bind);
  EXPECT_EQ(expected.partition, actual.partition);                  // issue 20 item 1
  EXPECT_EQ(expected.layout->cores, actual.layout->cores);          // issue 20 item 2
  EXPECT_EQ(expected.layout->min_cores, actual.layout->min_cores);  // --cores MIN-MAX
  EXPECT_EQ(expected.layout->max_cores, actual.layout->max_cores);
}

// Every field but the allocation, which comes back as names (StoredJob::nodes).
void expect_same_job(const Job& expected, const Job& actual) {
  EXPECT_EQ(expected.id, actual.id);
  expect_same_spec(expected.spec, actual.spec);
  EXPECT_EQ(expected.state, actual.state);
  expect_same(expected.submit_time, actual.submit_time, "submit_time");
  expect_same(expected.start_time, actual.start_time, "start_time");
  expect_same(expected.end_time, actual.end_time, "end_time");
  EXPECT_EQ(expected.exit_status, actual.exit_status);
  EXPECT_EQ(expected.outcome, actual.outcome);
  EXPECT_EQ(expected.run->expansions, actual.run->expansions);
  EXPECT_EQ(expected.run->shrinks, actual.run->shrinks);
  EXPECT_EQ(expected.run->gain, actual.run->gain);
  EXPECT_EQ(expected.run->requeues, actual.run->requeues);
  EXPECT_EQ(expected.run->suspensions, actual.run->suspensions);
  expect_same(expected.run->suspended_since, actual.run->suspended_since, "suspended_since");
  expect_same(expected.run->mtct, actual.run->mtct, "mtct");
  expect_same(expected.run->power_w, actual.run->power_w, "power_w");
  ASSERT_EQ(expected.run->request.has_value(), actual.run->request.has_value());
  if (expected.run->request) {
    EXPECT_EQ(expected.run->request->op, actual.run->request->op);
    EXPECT_EQ(expected.run->request->nodes, actual.run->request->nodes);
  }
  expect_same(expected.run->expected_start, actual.run->expected_start, "expected_start");
  expect_same(expected.run->limit_extension, actual.run->limit_extension, "limit_extension");
  expect_same(expected.run->adapting_since, actual.run->adapting_since, "adapting_since");
  expect_same(expected.run->resize_held_until, actual.run->resize_held_until, "resize_held_until");
  expect_same(expected.node_seconds, actual.node_seconds, "node_seconds");
  expect_same(expected.allocation_since, actual.allocation_since, "allocation_since");
  EXPECT_EQ(expected.version, actual.version);
  EXPECT_EQ(expected.run->end_reason, actual.run->end_reason);
  EXPECT_EQ(expected.run->max_rss_bytes, actual.run->max_rss_bytes);
  expect_same(expected.run->cpu_s, actual.run->cpu_s, "cpu_s");
  // ---- issue 20 item 2: the cores by node, in the saved nodes' order (the
  // node indices are the engine's to pair again)
  ASSERT_EQ(expected.run->cores.size(), actual.run->cores.size());
  for (std::size_t i = 0; i < expected.run->cores.size(); ++i) {
    EXPECT_EQ(expected.run->cores[i].cores, actual.run->cores[i].cores) << "entry " << i;
    EXPECT_EQ(actual.run->cores[i].node, -1);
  }
  // ---- issue 18 item 2: the hold is journaled; Job::dependency and
  // before_begin are worked out again when the job is restored.
  EXPECT_EQ(expected.hold, actual.hold);
}

void expect_same_event(const Event& expected, const Event& actual) {
  EXPECT_EQ(expected.seq, actual.seq);
  expect_same(expected.time, actual.time, "time");
  EXPECT_EQ(expected.type, actual.type);
  EXPECT_EQ(expected.job, actual.job);
  EXPECT_EQ(expected.from, actual.from);
  EXPECT_EQ(expected.to, actual.to);
  EXPECT_EQ(expected.nodes, actual.nodes);
  EXPECT_EQ(expected.prev_nodes, actual.prev_nodes);
  expect_same(expected.expected_start, actual.expected_start, "expected_start");
  expect_same(expected.lower_w, actual.lower_w, "lower_w");
  expect_same(expected.upper_w, actual.upper_w, "upper_w");
  expect_same(expected.power_w, actual.power_w, "power_w");
  expect_same(expected.pass_s, actual.pass_s, "pass_s");
  EXPECT_EQ(expected.actions, actual.actions);
  EXPECT_EQ(expected.reason, actual.reason);
  EXPECT_EQ(expected.code, actual.code);
  EXPECT_EQ(expected.file, actual.file);
  EXPECT_EQ(expected.line, actual.line);
  EXPECT_EQ(expected.user, actual.user);
  EXPECT_EQ(expected.node, actual.node);
  EXPECT_EQ(expected.message, actual.message);
  EXPECT_EQ(expected.partition, actual.partition);  // issue 20 item 1
}

// A job with every field away from its default.
Job full_job(JobId id) {
  Job job;
  job.id = id;
  job.spec.name = "lulesh-scan";
  job.spec.user = "alice";
  job.spec.kind = JobKind::Malleable;
  job.spec.nodes = 4;
  job.spec.min_nodes = 2;
  job.spec.max_nodes = 16;
  job.spec.constraint = NodeConstraint::Pof2;
  job.spec.tasks_per_node = 48;
  job.spec.walltime = 3600.5;
  job.spec.power_min_w = 120.25;
  job.spec.power_max_w = 310.75;
  job.spec.urgent = true;
  job.spec.command = "#!/bin/sh\n#SBATCH -N 4\nsrun ./lulesh -s 40 \"quoted\" 'x' \\ \u00e9\n";
  job.spec.workdir = "/home/alice/run 1";
  job.spec.extra.edit().output = "/home/alice/run 1/lulesh-%j.out";
  job.spec.extra.edit().environment = {
      {"OMP_NUM_THREADS", "4"}, {"PATH", "/usr/bin:/bin"}, {"EMPTY", ""}, {"PATH", "again"}};
  job.spec.extra.edit().mem_bytes = std::uint64_t{4} << 30;
  job.spec.extra.edit().error = "/home/alice/run 1/lulesh-%j.err";
  job.spec.extra.edit().args = {"-s", "40", "", "caf\u00e9 \"q\""};
  job.spec.extra.edit().nodelist = {"n1", "g\u00e9 2"};
  job.spec.extra.edit().exclude = {"n[3]"};
  job.spec.extra.edit().gpus_per_node = 2;
  job.spec.layout.edit().ntasks = 9;
  job.spec.layout.edit().nodes_from_tasks = true;
  job.spec.layout.edit().cpus_per_task = 3;
  job.spec.layout.edit().distribution = tasks::Distribution::Cyclic;
  job.spec.layout.edit().cpu_bind = tasks::CpuBind::Cores;
  job.spec.partition = "wide";
  job.spec.layout.edit().cores = 6;
  job.spec.layout.edit().min_cores = 2;
  job.spec.layout.edit().max_cores = 8;
  job.run.edit().cores = {{7, {0, 1}}, {3, {4}}, {9, {2, 5}}, {12, {7}}};
  job.state = JobState::Adapting;
  job.submit_time = 1700000000.125;
  job.start_time = 1700000100.5;
  job.end_time = 1700009999.75;
  job.allocation = {7, 3, 9, 12};
  job.exit_status = -9;
  job.outcome = JobState::Timeout;
  job.run.edit().expansions = 3;
  job.run.edit().shrinks = 2;
  job.run.edit().gain = -5;
  job.run.edit().requeues = 1;
  job.run.edit().suspensions = 2;
  job.run.edit().suspended_since = 1700000925.25;
  job.run.edit().mtct = 0.4375;
  job.run.edit().power_w = 215.5;
  job.run.edit().request = ResizeRequest{ResizeRequest::Op::Shrink, 2};
  job.run.edit().expected_start = 1700000050.0;
  job.run.edit().limit_extension = 12.5;
  job.run.edit().resize_held_until = 1700000930.5;
  job.run.edit().adapting_since = 1700000900.25;
  job.node_seconds = 12345.678901234567;
  job.allocation_since = 1700000800.0;
  job.version = 42;
  job.run.edit().end_reason = "out of memory: the job went over its --mem limit of 32 MiB";
  job.run.edit().max_rss_bytes = std::uint64_t{33554432};
  job.run.edit().cpu_s = 75.25;
  // ---- issue 18 item 2
  job.spec.extra.edit().dependency = "afterok:3:4,singleton";
  job.spec.extra.edit().begin_time = 1700000000.5;
  job.spec.hold = true;
  job.hold = HoldKind::Admin;
  // ---- priority (issue 18 item 5)
  job.spec.extra.edit().account = "physics \u00e9";
  job.spec.qos = "high";
  job.spec.nice = -2147483645;
  // ---- job arrays (issue 18 item 1)
  job.spec.extra.edit().array = "0-9999:3%40";
  job.spec.extra.edit().array_job_id = 5;
  job.spec.extra.edit().array_task_id = 6;
  job.spec.extra.edit().array_throttle = 40;
  return job;
}

Job simple_job(JobId id, JobState state, const std::string& user = "alice", double end = -1) {
  Job job;
  job.id = id;
  job.spec.name = "job" + std::to_string(id);
  job.spec.user = user;
  job.state = state;
  job.submit_time = static_cast<double>(id);
  job.end_time = end;
  return job;
}

Event make_event(std::uint64_t seq) {
  Event event;
  event.seq = seq;
  event.time = 1700000000.0 + static_cast<double>(seq) / 8;
  event.type = EventType::JobResized;
  event.job = static_cast<JobId>(100 + seq);
  event.from = JobState::Adapting;
  event.to = JobState::Running;
  event.nodes = 8;
  event.prev_nodes = 4;
  // Every topic field set, so that a round trip of any type checks them all.
  event.expected_start = 1700000500.25;
  event.lower_w = 250.5;
  event.upper_w = 900.25;
  event.power_w = 1234.5;
  event.pass_s = 0.0125;
  event.actions = 3;
  event.reason = "submit";
  event.partition = "wide";
  event.code = "runtime";
  event.file = "lib/queue.lua";
  event.line = 42;
  event.user = "alice";
  event.node = "n0" + std::to_string(seq);
  event.message = "resized, seq " + std::to_string(seq);
  return event;
}

std::vector<JobId> ids_of(const std::vector<StoredJob>& jobs) {
  std::vector<JobId> ids;
  for (const StoredJob& stored : jobs) ids.push_back(stored.job.id);
  return ids;
}

// The message of the StoreError that opening `path` throws ("" if none).
std::string open_error(const std::string& path) {
  try {
    StateStore::open(path);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

// Runs SQL on a database file directly, behind the store's back.
void raw_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_free(error);
  sqlite3_close(db);
}

// The kinds and names of a database file's tables and indexes, sorted.
std::vector<std::string> schema_objects(const std::string& path) {
  std::vector<std::string> objects;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT type || ' ' || name FROM sqlite_master ORDER BY 1", -1,
                               &statement, nullptr),
            SQLITE_OK);
  while (sqlite3_step(statement) == SQLITE_ROW) {
    objects.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return objects;
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    dir_ = fs::temp_directory_path() / ("sched-store-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++) + "-" + std::to_string(now));
    ASSERT_TRUE(fs::create_directory(dir_)) << dir_;
    path_ = (dir_ / "state.db").string();
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }

  std::unique_ptr<StateStore> open() { return StateStore::open(path_); }

  fs::path dir_;
  std::string path_;
};

TEST_F(StateStoreTest, RoundTripKeepsEveryField) {
  // A new field in these structs must be saved by the store and compared above.
  // hold is saved; dependency, before_begin, array_throttled derived;
  // priority, factors and weighted (issue 18 item 5) computed again when the
  // job is restored.
  // + suspensions, suspended_since (issue 17 item 3); partition (issue 20
  // item 1) is the index of spec.partition, found again when restored;
  // cores (issue 20 item 2). Issue 15: the rarely set ones are in Job::run
  // (one box, counted as its fields); factors is gone (it was never read).
  EXPECT_EQ(field_count<Job>() - 1 + field_count<JobRun>(), 36u);
  // + account, qos, nice (item 5), nodelist, exclude, gpus_per_node (item 4),
  // array, array_job_id, array_task_id, array_throttle (item 1); ntasks,
  // nodes_from_tasks, cpus_per_task, distribution, cpu_bind (issue 16 item 1);
  // partition (issue 20 item 1); cores, min_cores, max_cores (issue 20 item 2).
  // Issue 15: JobSpec::extra and JobSpec::layout counted as their fields.
  EXPECT_EQ(field_count<JobSpec>() - 2 + field_count<JobSpecExtra>() + field_count<JobLayout>(),
            41u);
  EXPECT_EQ(field_count<ResizeRequest>(), 2u);
  EXPECT_EQ(field_count<Event>(), 22u);  // + partition (issue 20 item 1)

  auto store = open();
  const Job job = full_job(7);
  const std::vector<std::string> names = {"n07", "n03", "n09", "n12"};
  store->save_job(job, names);

  const std::optional<StoredJob> loaded = store->load_job(7);
  ASSERT_TRUE(loaded);
  expect_same_job(job, loaded->job);
  EXPECT_EQ(loaded->nodes, names);  // leader first
  EXPECT_TRUE(loaded->job.allocation.empty()) << "indices are the daemon's to map";
  EXPECT_FALSE(store->load_job(8));
}

TEST_F(StateStoreTest, RoundTripKeepsUnusualValues) {
  auto store = open();
  Job job = simple_job(3, JobState::Running);
  job.spec.command = "latin-1 \xe9t\xe9 and a NUL \0 inside"s;
  job.spec.extra.edit().environment = {{"LANG\xff", "caf\xe9"}, {"", ""}};
  job.spec.name = "name\xc3";  // cut in the middle of a UTF-8 sequence
  job.spec.walltime = std::numeric_limits<double>::infinity();
  job.run.edit().mtct = std::numeric_limits<double>::infinity();  // no computation time measured
  job.run.edit().power_w = std::numeric_limits<double>::quiet_NaN();
  job.run.edit().expected_start = -std::numeric_limits<double>::infinity();
  job.start_time = std::numeric_limits<double>::quiet_NaN();
  job.version = std::numeric_limits<std::uint64_t>::max();
  job.allocation = {0};
  store->save_job(job, {"n\xe9\xff"});

  const std::optional<StoredJob> loaded = store->load_job(3);
  ASSERT_TRUE(loaded);
  expect_same_job(job, loaded->job);
  EXPECT_EQ(loaded->nodes, std::vector<std::string>{"n\xe9\xff"});
  EXPECT_FALSE(loaded->job.run->request);
}

TEST_F(StateStoreTest, SavingTwiceUpdatesInsteadOfDuplicating) {
  auto store = open();
  Job job = full_job(4);
  store->save_job(job, {"a", "b", "c", "d"});
  job.state = JobState::Running;
  job.allocation = {1, 2};
  job.run.edit().shrinks = 3;
  job.run.edit().mtct.reset();
  job.run.edit().request.reset();
  job.spec.extra.edit().environment.clear();
  store->save_job(job, {"a", "c"});

  const std::vector<StoredJob> active = store->load_active_jobs();
  ASSERT_EQ(active.size(), 1u);
  expect_same_job(job, active[0].job);
  EXPECT_EQ(active[0].nodes, (std::vector<std::string>{"a", "c"}));

  job.state = JobState::Completed;
  job.allocation.clear();
  store->save_job(job, {});
  EXPECT_TRUE(store->load_active_jobs().empty());
  EXPECT_EQ(ids_of(store->finished_jobs({})), std::vector<JobId>{4});
}

TEST_F(StateStoreTest, SaveJobWantsOneNameForEachAllocatedNode) {
  auto store = open();
  Job job = simple_job(1, JobState::Running);
  job.allocation = {0, 1};
  try {
    store->save_job(job, {"n0"});
    FAIL() << "a short name list was accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("1 node names for an allocation of 2"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(store->load_job(1));
}

TEST_F(StateStoreTest, LoadActiveJobsSkipsTerminalJobsAndKeepsIdOrder) {
  auto store = open();
  store->save_job(simple_job(9, JobState::Completed, "alice", 50), {});
  store->save_job(simple_job(5, JobState::Running), {});
  store->save_job(simple_job(12, JobState::Pending), {});
  store->save_job(simple_job(2, JobState::Completing), {});
  store->save_job(simple_job(7, JobState::Cancelled, "alice", 60), {});
  store->save_job(simple_job(3, JobState::Failed, "alice", 70), {});
  store->save_job(simple_job(11, JobState::Timeout, "alice", 80), {});
  store->save_job(simple_job(8, JobState::Adapting), {});
  store->save_job(simple_job(6, JobState::Starting), {});
  EXPECT_EQ(ids_of(store->load_active_jobs()), (std::vector<JobId>{2, 5, 6, 8, 12}));
}

TEST_F(StateStoreTest, ASuspendedJobIsActiveAndKeepsItsNodesAndSuspension) {
  // A suspended job survives a restart as suspended (issue 17 item 3).
  auto store = open();
  Job job = simple_job(4, JobState::Suspended);
  job.allocation = {0, 1};
  job.run.edit().suspensions = 1;
  job.run.edit().suspended_since = 1700000100.5;
  store->save_job(job, {"n1", "n2"});
  const std::vector<StoredJob> active = store->load_active_jobs();
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].job.state, JobState::Suspended);
  EXPECT_EQ(active[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(active[0].job.run->suspended_since, 1700000100.5);
  EXPECT_EQ(active[0].job.run->suspensions, 1);
}

TEST_F(StateStoreTest, MaxJobIdIncludesFinishedJobs) {
  auto store = open();
  EXPECT_EQ(store->max_job_id(), 0);
  store->save_job(simple_job(3, JobState::Running), {});
  store->save_job(simple_job(10, JobState::Completed, "alice", 5), {});
  store->save_job(simple_job(6, JobState::Pending), {});
  EXPECT_EQ(store->max_job_id(), 10);
}

TEST_F(StateStoreTest, EventJournalKeepsOrderAndPagesWithEventsAfter) {
  auto store = open();
  EXPECT_EQ(store->last_event_seq(), 0u);
  EXPECT_TRUE(store->events_after(0, 10).empty());
  for (std::uint64_t seq = 1; seq <= 5; ++seq) store->append_event(make_event(seq));
  Event odd = make_event(6);
  odd.type = EventType::PolicyError;
  odd.job = 0;
  odd.message = "policy.lua:12: attempt to index a nil value\n\tstack";
  odd.pass_s = std::numeric_limits<double>::infinity();
  odd.lower_w = std::numeric_limits<double>::quiet_NaN();
  odd.reason = "caf\xe9";  // not UTF-8
  store->append_event(odd);
  EXPECT_EQ(store->last_event_seq(), 6u);

  const std::vector<Event> all = store->events_after(0, 0);  // 0: no limit
  ASSERT_EQ(all.size(), 6u);
  for (std::uint64_t seq = 1; seq <= 5; ++seq) expect_same_event(make_event(seq), all[seq - 1]);
  expect_same_event(odd, all[5]);

  const std::vector<Event> page = store->events_after(2, 2);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].seq, 3u);
  EXPECT_EQ(page[1].seq, 4u);
  EXPECT_TRUE(store->events_after(6, 10).empty());
  EXPECT_TRUE(store->events_after(std::numeric_limits<std::uint64_t>::max(), 10).empty());

  // A sequence number is written once: a restarted daemon must carry on after
  // last_event_seq().
  EXPECT_THROW(store->append_event(make_event(3)), StoreError);
  EXPECT_EQ(store->events_after(0, 0).size(), 6u);
}

TEST_F(StateStoreTest, EventsEveryTypeRoundTrips) {
  auto store = open();
  std::uint64_t seq = 0;
  for (int type = 0; type <= static_cast<int>(EventType::SchedPass); ++type) {
    Event event = make_event(++seq);
    event.type = static_cast<EventType>(type);
    store->append_event(event);
    const std::vector<Event> back = store->events_after(seq - 1, 1);
    ASSERT_EQ(back.size(), 1u);
    expect_same_event(event, back[0]);
  }
}

TEST_F(StateStoreTest, AcctQueriesFilterByUserStateWindowIdsAndLimit) {
  auto store = open();
  store->save_job(simple_job(1, JobState::Completed, "alice", 100), {});
  store->save_job(simple_job(2, JobState::Failed, "bob", 200), {});
  store->save_job(simple_job(3, JobState::Cancelled, "alice", 150), {});
  store->save_job(simple_job(4, JobState::Timeout, "alice", 300), {});
  store->save_job(simple_job(5, JobState::Completed, "bob", 150), {});
  store->save_job(simple_job(6, JobState::Running, "alice"), {});  // never in acct
  const auto acct = [&](const AcctQuery& query) { return ids_of(store->finished_jobs(query)); };
  using Ids = std::vector<JobId>;

  EXPECT_EQ(acct({}), (Ids{1, 3, 5, 2, 4}));  // by end time, ties by id

  AcctQuery by_user;
  by_user.user = "alice";
  EXPECT_EQ(acct(by_user), (Ids{1, 3, 4}));
  by_user.user = "carol";
  EXPECT_EQ(acct(by_user), Ids{});
  by_user.user = "x' OR '1'='1";  // values are bound, never spliced into SQL
  EXPECT_EQ(acct(by_user), Ids{});

  AcctQuery by_state;
  by_state.states = {JobState::Completed};
  EXPECT_EQ(acct(by_state), (Ids{1, 5}));
  by_state.states = {JobState::Timeout, JobState::Failed};
  EXPECT_EQ(acct(by_state), (Ids{2, 4}));
  by_state.states = {JobState::Running};  // the engine reports active jobs
  EXPECT_EQ(acct(by_state), Ids{});
  by_state.states = {JobState::Running, JobState::Completed};
  EXPECT_EQ(acct(by_state), (Ids{1, 5}));

  AcctQuery window;
  window.since = 150;  // inclusive
  EXPECT_EQ(acct(window), (Ids{3, 5, 2, 4}));
  window.since.reset();
  window.until = 200;  // exclusive
  EXPECT_EQ(acct(window), (Ids{1, 3, 5}));
  window.since = 150;
  window.until = 300;
  EXPECT_EQ(acct(window), (Ids{3, 5, 2}));

  AcctQuery by_id;
  by_id.ids = {4, 1, 6, 99};
  EXPECT_EQ(acct(by_id), (Ids{1, 4}));

  AcctQuery limited;
  limited.limit = 2;
  EXPECT_EQ(acct(limited), (Ids{1, 3}));
  limited.limit = 0;  // no limit
  EXPECT_EQ(acct(limited), (Ids{1, 3, 5, 2, 4}));

  AcctQuery combined;
  combined.user = "bob";
  combined.states = {JobState::Completed};
  combined.since = 100;
  EXPECT_EQ(acct(combined), Ids{5});

  // Rows come back whole.
  const std::vector<StoredJob> one = store->finished_jobs(by_id);
  ASSERT_EQ(one.size(), 2u);
  expect_same_job(simple_job(1, JobState::Completed, "alice", 100), one[0].job);
}

// Pages of acct: each goes on after the (end time, id) of the last job of
// the page before, so that pages join to the whole list, ties included,
// and filters still apply.
TEST_F(StateStoreTest, AcctPagesGoOnAfterTheLastJobOfThePageBefore) {
  auto store = open();
  using Ids = std::vector<JobId>;
  Ids all_alice;
  for (JobId id = 1; id <= 23; ++id) {
    // Ties of end time across page edges; ids not in end time order.
    const double end = 100 + static_cast<double>((id * 7) % 5);
    const char* user = id % 3 == 0 ? "bob" : "alice";
    store->save_job(simple_job(id, JobState::Completed, user, end), {});
  }
  store->save_job(simple_job(30, JobState::Running, "alice"), {});
  AcctQuery whole;
  whole.limit = 0;
  whole.user = "alice";
  const Ids expected = ids_of(store->finished_jobs(whole));
  ASSERT_EQ(expected.size(), 16u);

  AcctQuery page = whole;
  page.limit = 3;
  Ids joined;
  int pages = 0;
  while (true) {
    const std::vector<StoredJob> got = store->finished_jobs(page);
    ++pages;
    for (const StoredJob& stored : got) {
      EXPECT_EQ(stored.job.spec.user, "alice");
      joined.push_back(stored.job.id);
    }
    if (got.size() < 3) break;
    page.after = AcctPosition{got.back().job.end_time, got.back().job.id};
  }
  EXPECT_EQ(joined, expected);
  EXPECT_EQ(pages, 6);
  page.after = AcctPosition{1e9, 0};  // after every end
  EXPECT_EQ(ids_of(store->finished_jobs(page)), Ids{});
}

TEST_F(StateStoreTest, MetaKeepsTheLatestValue) {
  auto store = open();
  EXPECT_FALSE(store->meta("corridor"));
  store->set_meta("corridor", R"({"lower":1000,"upper":5000})");
  store->set_meta("other", "x");
  EXPECT_EQ(store->meta("corridor"), R"({"lower":1000,"upper":5000})");
  store->set_meta("corridor", "");
  EXPECT_EQ(store->meta("corridor"), "");
  EXPECT_EQ(store->meta("other"), "x");
}

TEST_F(StateStoreTest, ReopeningGivesTheSameData) {
  const Job job = full_job(21);
  {
    auto store = open();
    store->save_job(job, {"a", "b", "c", "d"});
    store->save_job(simple_job(22, JobState::Completed, "bob", 10), {});
    store->append_event(make_event(1));
    store->append_event(make_event(2));
    store->set_meta("corridor", "1000:5000");
  }
  auto store = open();
  EXPECT_EQ(store->path(), path_);
  const std::vector<StoredJob> active = store->load_active_jobs();
  ASSERT_EQ(active.size(), 1u);
  expect_same_job(job, active[0].job);
  EXPECT_EQ(active[0].nodes, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(ids_of(store->finished_jobs({})), std::vector<JobId>{22});
  EXPECT_EQ(store->max_job_id(), 22);
  EXPECT_EQ(store->last_event_seq(), 2u);
  expect_same_event(make_event(2), store->events_after(1, 1).at(0));
  EXPECT_EQ(store->meta("corridor"), "1000:5000");
}

TEST_F(StateStoreTest, TransactionsGroupWritesAndRollBack) {
  auto store = open();
  EXPECT_FALSE(store->in_transaction());
  EXPECT_THROW(store->commit(), StoreError);

  store->begin();
  EXPECT_TRUE(store->in_transaction());
  EXPECT_THROW(store->begin(), StoreError);  // no nesting
  store->save_job(simple_job(1, JobState::Pending), {});
  store->append_event(make_event(1));
  EXPECT_TRUE(store->load_job(1));  // the writer sees its own writes
  store->rollback();
  EXPECT_FALSE(store->in_transaction());
  EXPECT_FALSE(store->load_job(1));
  EXPECT_EQ(store->last_event_seq(), 0u);
  store->rollback();  // nothing open: nothing to do

  store->begin();
  store->save_job(simple_job(2, JobState::Pending), {});
  store->append_event(make_event(1));
  store->commit();
  EXPECT_FALSE(store->in_transaction());
  EXPECT_TRUE(store->load_job(2));

  // A failed write inside a transaction leaves it open for the caller to
  // decide; the writes before it are still there.
  store->begin();
  store->save_job(simple_job(3, JobState::Pending), {});
  EXPECT_THROW(store->append_event(make_event(1)), StoreError);
  EXPECT_TRUE(store->in_transaction());
  store->commit();
  EXPECT_TRUE(store->load_job(3));
}

TEST_F(StateStoreTest, AnUncommittedTransactionIsLostWhenTheStoreCloses) {
  {
    auto store = open();
    store->save_job(simple_job(1, JobState::Running), {});
    store->begin();
    store->save_job(simple_job(2, JobState::Running), {});
  }
  auto store = open();
  EXPECT_EQ(ids_of(store->load_active_jobs()), std::vector<JobId>{1});
}

// A child process writes and dies without closing the store (as a killed
// daemon would); the parent then finds exactly what was committed.
TEST_F(StateStoreTest, CommittedWritesSurviveTheProcessDying) {
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // No gtest here, and no destructors: _exit leaves the store open.
    try {
      auto store = open();
      store->begin();
      store->save_job(full_job(1), {"a", "b", "c", "d"});
      store->save_job(simple_job(2, JobState::Pending), {});
      store->append_event(make_event(1));
      store->set_meta("corridor", "1000:5000");
      store->commit();
      store->begin();
      store->save_job(simple_job(3, JobState::Pending), {});
      store->append_event(make_event(2));
      ::_exit(0);
    } catch (...) {
      ::_exit(3);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child failed to write";

  auto store = open();
  const std::vector<StoredJob> active = store->load_active_jobs();
  EXPECT_EQ(ids_of(active), (std::vector<JobId>{1, 2}));
  ASSERT_FALSE(active.empty());
  expect_same_job(full_job(1), active[0].job);
  EXPECT_EQ(active[0].nodes, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_FALSE(store->load_job(3)) << "an uncommitted write survived";
  EXPECT_EQ(store->last_event_seq(), 1u);
  EXPECT_EQ(store->meta("corridor"), "1000:5000");
  EXPECT_EQ(store->max_job_id(), 2);
}

TEST_F(StateStoreTest, CommittedWritesSurviveSigkill) {
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    try {
      auto store = open();
      store->save_job(simple_job(1, JobState::Running), {});  // its own transaction
      store->begin();
      store->save_job(simple_job(2, JobState::Running), {});
      store->commit();
      store->begin();
      store->save_job(simple_job(3, JobState::Running), {});
      ::kill(::getpid(), SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child failed to write";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto store = open();
  EXPECT_EQ(ids_of(store->load_active_jobs()), (std::vector<JobId>{1, 2}));
}

// A key missing from a row's JSON (a field added after the row was written)
// reads as the field's default.
TEST_F(StateStoreTest, MissingJsonKeysReadAsDefaults) {
  auto store = open();
  store->save_job(full_job(1), {"a", "b", "c", "d"});
  raw_sql(path_, "UPDATE jobs SET spec = '{}', progress = '{}' WHERE id = 1");
  const std::optional<StoredJob> loaded = store->load_job(1);
  ASSERT_TRUE(loaded);
  Job expected;
  expected.id = 1;
  expected.spec.name = "lulesh-scan";
  expected.spec.user = "alice";
  expected.spec.kind = JobKind::Malleable;
  expected.state = JobState::Adapting;
  expected.submit_time = full_job(1).submit_time;
  expected.start_time = full_job(1).start_time;
  expected.end_time = full_job(1).end_time;
  expected.exit_status = full_job(1).exit_status;
  expect_same_job(expected, loaded->job);
}

TEST_F(StateStoreTest, DamagedRowsAreStoreErrorsNamingTheJob) {
  auto store = open();
  store->save_job(simple_job(1, JobState::Running), {});
  const auto load_error = [&] {
    try {
      store->load_active_jobs();
    } catch (const StoreError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  raw_sql(path_, "UPDATE jobs SET spec = 'not json' WHERE id = 1");
  EXPECT_NE(load_error().find("job 1: spec: not a JSON object"), std::string::npos) << load_error();
  raw_sql(path_, "UPDATE jobs SET spec = '{\"nodes\": \"four\"}' WHERE id = 1");
  EXPECT_NE(load_error().find("'nodes': expected an integer"), std::string::npos) << load_error();
  raw_sql(path_, "UPDATE jobs SET spec = '{}', kind = 'wobbly' WHERE id = 1");
  EXPECT_NE(load_error().find("unknown kind 'wobbly'"), std::string::npos) << load_error();
}

TEST_F(StateStoreTest, MissingDirectoryIsAClearError) {
  const std::string path = (dir_ / "no-such-dir" / "state.db").string();
  const std::string message = open_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));

  const std::string on_directory = open_error(dir_.string());
  EXPECT_NE(on_directory.find("is a directory"), std::string::npos) << on_directory;
}

TEST_F(StateStoreTest, AFileThatIsNotADatabaseIsAClearErrorAndIsLeftAlone) {
  for (const std::string& content :
       {std::string("hello\n"), std::string(5000, 'x'), std::string("[jobs]\nid = 1\n")}) {
    {
      std::ofstream out(path_, std::ios::binary | std::ios::trunc);
      out << content;
    }
    const std::string message = open_error(path_);
    EXPECT_NE(message.find(path_), std::string::npos) << message;
    EXPECT_NE(message.find("not an SQLite database"), std::string::npos) << message;
    EXPECT_EQ(file_bytes(path_), content);
  }
}

TEST_F(StateStoreTest, AnotherProgramsDatabaseIsRefused) {
  raw_sql(path_, "CREATE TABLE jobs (id INTEGER PRIMARY KEY, owner TEXT)");
  const std::string message = open_error(path_);
  EXPECT_NE(message.find(path_), std::string::npos) << message;
  EXPECT_NE(message.find("not a sched state database"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path_ + "-wal")) << "the foreign file was switched to WAL";
}

TEST_F(StateStoreTest, ANewerSchemaVersionIsRefused) {
  { open()->save_job(simple_job(1, JobState::Pending), {}); }
  raw_sql(path_, "PRAGMA user_version = 99");
  const std::string message = open_error(path_);
  EXPECT_NE(message.find(path_), std::string::npos) << message;
  EXPECT_NE(message.find("schema version 99 is newer"), std::string::npos) << message;

  raw_sql(path_, "PRAGMA user_version = 0");
  EXPECT_NE(open_error(path_).find("schema version 0 is older"), std::string::npos);
}

// A journal written by a build of schema 1 (value/value2 columns) opens,
// upgraded in place: its numbers come back under their topics' names.
TEST_F(StateStoreTest, ASchema1JournalIsUpgradedToNamedEventFields) {
  raw_sql(path_, R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, user TEXT NOT NULL, kind TEXT NOT NULL,
  state TEXT NOT NULL, submit_time REAL, start_time REAL, end_time REAL,
  exit_status INTEGER NOT NULL, nodes TEXT NOT NULL, spec TEXT NOT NULL, progress TEXT NOT NULL);
CREATE INDEX jobs_by_state ON jobs (state, end_time);
CREATE INDEX jobs_by_user ON jobs (user, end_time);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY, time REAL, type TEXT NOT NULL, job INTEGER NOT NULL,
  from_state TEXT NOT NULL, to_state TEXT NOT NULL, nodes INTEGER NOT NULL,
  prev_nodes INTEGER NOT NULL, value REAL, value2 REAL, node TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO events VALUES (1, 10.0, 'power.corridor', 0, 'PENDING', 'PENDING', 0, 0, 250.5, 900.25, '', '');
INSERT INTO events VALUES (2, 11.0, 'job.reserved', 7, 'PENDING', 'PENDING', 0, 0, 500.0, 0.0, '', '');
INSERT INTO events VALUES (3, 12.0, 'sched.pass', 0, 'PENDING', 'PENDING', 2, 0, 0.004, 0.0, '', 'submit');
INSERT INTO events VALUES (4, 13.0, 'job.resized', 7, 'ADAPTING', 'RUNNING', 4, 2, 0.0, 0.0, '', 'grown');
INSERT INTO events VALUES (5, 14.0, 'job.reserved', 8, 'PENDING', 'PENDING', 0, 0, NULL, NULL, '', '');
PRAGMA application_id = 1935894628;
PRAGMA user_version = 1;
)sql");
  {
    auto store = open();
    const std::vector<Event> events = store->events_after(0, 0);
    ASSERT_EQ(events.size(), 5u);
    EXPECT_EQ(events[0].type, EventType::PowerCorridor);
    EXPECT_EQ(events[0].lower_w, 250.5);
    EXPECT_EQ(events[0].upper_w, 900.25);
    EXPECT_EQ(events[1].type, EventType::JobReserved);
    EXPECT_EQ(events[1].job, 7);
    EXPECT_EQ(events[1].expected_start, 500.0);
    EXPECT_EQ(events[2].type, EventType::SchedPass);
    EXPECT_EQ(events[2].pass_s, 0.004);
    EXPECT_EQ(events[2].actions, 2) << "a pass's action count was its nodes";
    EXPECT_EQ(events[2].reason, "submit") << "a pass's reason was its message";
    EXPECT_EQ(events[2].nodes, 0);
    EXPECT_EQ(events[2].message, "");
    EXPECT_EQ(events[3].nodes, 4);
    EXPECT_EQ(events[3].prev_nodes, 2);
    EXPECT_EQ(events[3].message, "grown");
    EXPECT_EQ(events[4].expected_start, 0.0) << "NULL read as 0, as before";
    // New events go on after the old ones.
    Event next = make_event(6);
    store->append_event(next);
    EXPECT_EQ(store->last_event_seq(), 6u);
    expect_same_event(next, store->events_after(5, 1).at(0));
    // The upgrade adds schema 2's submissions table.
    store->remember_submission("r1", 7, 200);
    EXPECT_EQ(store->submission("r1", 100), 7);
  }
  // Upgraded once: it reopens as a file of this build.
  auto store = open();
  EXPECT_EQ(store->events_after(0, 0).size(), 6u);
  EXPECT_EQ(store->submission("r1", 100), 7);
  // The upgraded file has what a new one has.
  const std::string fresh = (dir_ / "new.db").string();
  StateStore::open(fresh);
  const std::vector<std::string> objects = schema_objects(fresh);
  EXPECT_EQ(schema_objects(path_), objects);
  EXPECT_NE(std::find(objects.begin(), objects.end(), "table submissions"), objects.end());
}

// ":memory:" gives a store that lives only as long as the object (for tests).
TEST(StateStoreMemory, InMemoryStoreWorks) {
  auto store = StateStore::open(":memory:");
  store->save_job(full_job(1), {"a", "b", "c", "d"});
  EXPECT_EQ(store->max_job_id(), 1);
  EXPECT_FALSE(StateStore::open(":memory:")->load_job(1));
}

TEST_F(StateStoreTest, OpensInWalMode) {
  auto store = open();
  store->save_job(simple_job(1, JobState::Pending), {});
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &statement, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(statement), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)), "wal");
  sqlite3_finalize(statement);
  sqlite3_close(db);
}

TEST_F(StateStoreTest, SubmissionsByRequestIdOutliveReopeningAndExpire) {
  {
    auto store = open();
    EXPECT_FALSE(store->submission("r1", 100));
    store->remember_submission("r1", 7, 200);
    store->remember_submission("r2", 8, 150);
    store->begin();
    store->remember_submission("r3", 9, 300);
    store->rollback();  // not journaled with its job: not remembered either
  }
  auto store = open();
  EXPECT_EQ(store->submission("r1", 100), 7);
  EXPECT_EQ(store->submission("r2", 100), 8);
  EXPECT_FALSE(store->submission("r3", 100));
  // Expired: no longer an answer, and then deleted.
  EXPECT_FALSE(store->submission("r2", 150));
  store->forget_submissions(160);
  EXPECT_FALSE(store->submission("r2", 0));
  EXPECT_EQ(store->submission("r1", 160), 7);
}

}  // namespace
}  // namespace sched
