// Pages of jobs.query, acct and nodes.query (docs/protocol.md §4): pages
// joined are the whole filtered list, each entry once; the filters are
// applied in schedd, so a page holds only what matches; cursors this server
// did not give are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "handlers/pages.hpp"
#include "sched/proto/fields.hpp"

namespace sched::daemon {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<std::int64_t>;

std::string invalid_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const proto::ProtoError& e) {
    return e.code() + ": " + e.what();
  }
  return "no error";
}

class JobsPages : public test::EngineFixture {
 protected:
  // Two running jobs (3, 1 by start), then 30 pending: alice and bob in
  // turn, job 20 urgent (the head), and some elastic (the second queue).
  void SetUp() override {
    init(2);
    for (int i = 0; i < 32; ++i) {
      clock.set(i);
      JobSpec spec = i % 5 == 4 ? test::malleable_spec(1, 1, 2) : test::rigid_spec(1);
      spec.user = i % 2 == 0 ? "alice" : "bob";
      spec.urgent = i == 19;
      submit(spec);
    }
    in_pass([](PassContext& ctx) {
      EXPECT_EQ(ctx.start(3), std::nullopt);
      EXPECT_EQ(ctx.start(1), std::nullopt);
    });
    engine->job_started(1);
  }

  // Every page of `query` under `bounds`, joined; `between` runs after each.
  std::vector<proto::JobInfo> all_pages(
      proto::JobsQuery query, PageBounds bounds, int* pages = nullptr,
      const std::function<void(const proto::JobList&)>& between = {}) {
    std::vector<proto::JobInfo> out;
    int count = 0;
    while (true) {
      const proto::JobList page = jobs_page(*engine, *store, query, bounds);
      ++count;
      EXPECT_LE(page.jobs.size(), bounds.items);
      EXPECT_FALSE(page.jobs.empty() && page.next_cursor) << "an empty page with more to come";
      out.insert(out.end(), page.jobs.begin(), page.jobs.end());
      if (!page.next_cursor) break;
      query.cursor = page.next_cursor;
      if (between) between(page);
      if (count > 1000) break;
    }
    if (pages) *pages = count;
    return out;
  }

  static Ids ids_of(const std::vector<proto::JobInfo>& jobs) {
    Ids ids;
    for (const auto& job : jobs) ids.push_back(job.id);
    return ids;
  }

  // The list as the engine has it: not pending by id, then the queue.
  Ids expected(const std::function<bool(const Job&)>& wanted) const {
    Ids ids;
    std::set<JobId> others;
    for (const auto& [id, job] : engine->jobs()) {
      if (job->state != JobState::Pending && !is_terminal(job->state) && wanted(*job)) {
        others.insert(id);
      }
    }
    ids.assign(others.begin(), others.end());
    for (const Job* job : engine->pending_jobs()) {
      if (wanted(*job)) ids.push_back(job->id);
    }
    return ids;
  }

  fs::path dir = fs::temp_directory_path() / ("sched-pages-" + std::to_string(::getpid()));
  std::unique_ptr<StateStore> store = [this] {
    fs::create_directories(dir);
    return StateStore::open((dir / "state.db").string());
  }();
  void TearDown() override {
    store.reset();
    fs::remove_all(dir);
  }
};

TEST_F(JobsPages, PagesJoinToTheWholeQueueEachJobOnce) {
  const Ids whole = expected([](const Job&) { return true; });
  ASSERT_EQ(whole.size(), 32u);
  EXPECT_EQ(whole[0], 1);
  EXPECT_EQ(whole[1], 3);
  EXPECT_EQ(whole[2], 20) << "the urgent job heads the queue";

  EXPECT_EQ(ids_of(all_pages({}, PageBounds{1000, 2 << 20})), whole);
  int pages = 0;
  const auto paged = all_pages({}, PageBounds{5, 2 << 20}, &pages);
  EXPECT_EQ(ids_of(paged), whole);
  EXPECT_EQ(pages, 7);
  // The head waits for resources, the rest for their turn, across pages.
  for (const auto& job : paged) {
    if (job.state != "PENDING") continue;
    EXPECT_EQ(job.reason, job.id == 20 ? "Resources" : "Priority") << job.id;
  }
  // A page of one job when its bytes are all the budget allows.
  EXPECT_EQ(ids_of(all_pages({}, PageBounds{1000, 1}, &pages)), whole);
  EXPECT_EQ(pages, 32);
}

TEST_F(JobsPages, PagesEndWhereTheByteBudgetDoes) {
  // The exact encoded sizes of the first jobs: a page takes as many as fit.
  const proto::JobList some = jobs_page(*engine, *store, {}, PageBounds{4, 2 << 20});
  ASSERT_EQ(some.jobs.size(), 4u);
  std::size_t three = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    msgpack::sbuffer buffer;
    proto::Packer packer(buffer);
    proto::detail::pack_value(packer, some.jobs[i]);
    three += buffer.size();
  }
  EXPECT_EQ(jobs_page(*engine, *store, {}, PageBounds{1000, three}).jobs.size(), 3u);
  EXPECT_EQ(jobs_page(*engine, *store, {}, PageBounds{1000, three - 1}).jobs.size(), 2u);
}

TEST_F(JobsPages, FiltersApplyBeforePaging) {
  proto::JobsQuery query;
  query.user = "bob";
  const auto bobs = all_pages(query, PageBounds{4, 2 << 20});
  EXPECT_EQ(ids_of(bobs), expected([](const Job& job) { return job.spec.user == "bob"; }));
  for (const auto& job : bobs) EXPECT_EQ(job.user, "bob");

  proto::JobsQuery running;
  running.states = {"running", "STARTING"};
  int pages = 0;
  EXPECT_EQ(ids_of(all_pages(running, PageBounds{1, 2 << 20}, &pages)), (Ids{1, 3}));
  EXPECT_EQ(pages, 2) << "no walk into the queue for jobs that cannot be there";

  proto::JobsQuery some;
  some.ids = {30, 3, 12, 999};
  some.states = {"PENDING", "STARTING"};
  EXPECT_EQ(ids_of(all_pages(some, PageBounds{1, 2 << 20})), (Ids{3, 12, 30}));
}

TEST_F(JobsPages, AQueueThatMovesBetweenPagesListsEachJobOnce) {
  // After each page a job two places behind its last is cancelled (never
  // to be listed), and every other time the page's last job too (listed
  // already: the next page must go on behind where it was).
  std::vector<JobId> unlisted;
  int turn = 0;
  const auto paged =
      all_pages({}, PageBounds{4, 2 << 20}, nullptr, [&](const proto::JobList& page) {
        const std::vector<const Job*> queue = engine->pending_jobs();
        for (std::size_t i = 0; i < queue.size(); ++i) {
          if (queue[i]->id != page.jobs.back().id) continue;
          if (i + 2 < queue.size()) {
            unlisted.push_back(queue[i + 2]->id);
            ASSERT_EQ(engine->cancel(queue[i + 2]->id), Status());
          }
          if (++turn % 2 == 0) {
            ASSERT_EQ(engine->cancel(queue[i]->id), Status());
          }
        }
      });
  const Ids ids = ids_of(paged);
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), ids.size()) << "a duplicate";
  for (JobId id : unlisted) {
    EXPECT_EQ(std::count(ids.begin(), ids.end(), id), 0) << id << " was cancelled unlisted";
  }
  EXPECT_GT(unlisted.size(), 3u);
  EXPECT_EQ(ids.size() + unlisted.size(), 32u) << "a job missing";
}

TEST_F(JobsPages, TheCursorsJobLeavingTheQueueDoesNotLoseItsPlace) {
  proto::JobsQuery query;
  const proto::JobList first = jobs_page(*engine, *store, query, PageBounds{6, 2 << 20});
  ASSERT_TRUE(first.next_cursor);
  // The job the cursor names is cancelled: the next page goes on behind
  // the one before it, which is still queued.
  ASSERT_EQ(engine->cancel(first.jobs.back().id), Status());
  query.cursor = first.next_cursor;
  const proto::JobList second = jobs_page(*engine, *store, query, PageBounds{1000, 2 << 20});
  Ids rest;
  bool after = false;
  for (const Job* job : engine->pending_jobs()) {
    if (after) rest.push_back(job->id);
    if (job->id == first.jobs[first.jobs.size() - 2].id) after = true;
  }
  EXPECT_EQ(rest.size(), 32u - 6u);
  EXPECT_EQ(ids_of(second.jobs), rest);
}

TEST_F(JobsPages, CursorsAndLimitsThisServerDidNotGiveAreRefused) {
  for (const char* bad : {"garbage", "r", "r-1", "r 5", "p1", "p1.x", "r12a", "e1.2", "i3", ""}) {
    proto::JobsQuery query;
    query.cursor = bad;
    EXPECT_EQ(invalid_message([&] {
                jobs_page(*engine, *store, query, PageBounds{});
              }).rfind("invalid: cursor: '", 0),
              0u)
        << bad;
  }
  DaemonConfig config;
  EXPECT_EQ(invalid_message([&] { page_bounds(0, config); }),
            "invalid: limit: 0 is not a page size (>= 1)");
  EXPECT_EQ(page_bounds(std::nullopt, config).items, 1000u);
  EXPECT_EQ(page_bounds(std::nullopt, config).bytes, 2u << 20);
  EXPECT_EQ(page_bounds(50000, config).items, 10000u);
  config.max_page_items = 3;
  EXPECT_EQ(page_bounds(10, config).items, 3u);
  config.max_message_bytes = 1 << 20;
  EXPECT_EQ(page_bounds(10, config).bytes, 1u << 19);
  proto::JobsQuery query;
  query.states = {"SLEEPING"};
  EXPECT_EQ(invalid_message([&] { jobs_page(*engine, *store, query, PageBounds{}); }),
            "invalid: unknown job state 'SLEEPING'");
}

// ------------------------------------------------------------------- acct

class AcctPages : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir);
    store = StateStore::open((dir / "state.db").string());
    // 40 ended jobs; end times tie in threes across page edges.
    for (JobId id = 1; id <= 40; ++id) {
      Job job;
      job.id = id;
      job.spec = test::rigid_spec(1);
      job.spec.user = id % 4 == 0 ? "bob" : "alice";
      job.state = id % 7 == 0 ? JobState::Failed : JobState::Completed;
      job.submit_time = 1;
      job.start_time = 2;
      job.end_time = 1000 + static_cast<double>((41 - id) / 3) + 0.1;
      store->save_job(job, {});
    }
  }
  void TearDown() override {
    store.reset();
    fs::remove_all(dir);
  }

  std::vector<proto::JobInfo> all_pages(proto::AcctQuery query, PageBounds bounds, int* pages) {
    std::vector<proto::JobInfo> out;
    *pages = 0;
    while (true) {
      const proto::JobList page = acct_page(*store, query, bounds);
      ++*pages;
      EXPECT_LE(page.jobs.size(), bounds.items);
      out.insert(out.end(), page.jobs.begin(), page.jobs.end());
      if (!page.next_cursor || *pages > 100) break;
      query.cursor = page.next_cursor;
    }
    return out;
  }
  Ids expected(const AcctQuery& query) {
    Ids ids;
    AcctQuery whole = query;
    whole.limit = 0;
    for (const StoredJob& job : store->finished_jobs(whole)) ids.push_back(job.job.id);
    return ids;
  }
  static Ids ids_of(const std::vector<proto::JobInfo>& jobs) {
    Ids ids;
    for (const auto& job : jobs) ids.push_back(job.id);
    return ids;
  }

  fs::path dir = fs::temp_directory_path() / ("sched-acct-pages-" + std::to_string(::getpid()));
  std::unique_ptr<StateStore> store;
};

TEST_F(AcctPages, PagesJoinToEveryEndedJobByEndTimeEachOnce) {
  int pages = 0;
  const Ids ids = ids_of(all_pages({}, PageBounds{7, 2 << 20}, &pages));
  EXPECT_EQ(ids, expected({}));
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_EQ(ids.front(), 39) << "by end time, then id";
  EXPECT_EQ(pages, 6);
  // A whole page, exactly: no empty page after it.
  EXPECT_EQ(ids_of(all_pages({}, PageBounds{8, 2 << 20}, &pages)), ids);
  EXPECT_EQ(pages, 5);
  EXPECT_EQ(ids_of(all_pages({}, PageBounds{1000, 1}, &pages)), ids);
  EXPECT_EQ(pages, 40);
}

TEST_F(AcctPages, FiltersApplyInSchedd) {
  proto::AcctQuery query;
  query.user = "alice";
  query.states = {"completed"};
  query.since = 1003;
  int pages = 0;
  const auto jobs = all_pages(query, PageBounds{4, 2 << 20}, &pages);
  for (const auto& job : jobs) {
    EXPECT_EQ(job.user, "alice");
    EXPECT_EQ(job.state, "COMPLETED");
    EXPECT_GE(*job.end_time, 1003);
  }
  AcctQuery same;
  same.user = "alice";
  same.states = {JobState::Completed};
  same.since = 1003;
  EXPECT_EQ(ids_of(jobs), expected(same));
  EXPECT_GT(pages, 3);
  query = {};
  query.ids = {5, 7, 39};
  EXPECT_EQ(ids_of(all_pages(query, PageBounds{1, 2 << 20}, &pages)), (Ids{39, 7, 5}));
}

TEST_F(AcctPages, ForeignCursorsAreRefused) {
  for (const char* bad : {"e", "e12", "e4090000000000000.0", "ezz.3", "r5", "e1.-3"}) {
    proto::AcctQuery query;
    query.cursor = bad;
    EXPECT_EQ(invalid_message([&] {
                acct_page(*store, query, PageBounds{});
              }).rfind("invalid: cursor: '", 0),
              0u)
        << bad;
  }
}

// ------------------------------------------------------------------ nodes

class NodesPages : public test::EngineFixture {
 protected:
  void SetUp() override {
    init(0);
    for (const char* name : {"n3", "n1", "n10", "gpu1", "n2", "n4", "n5"}) engine->add_node(name);
    ASSERT_EQ(engine->set_node_draining("n1", true), Status());
    ASSERT_EQ(engine->set_node_up("n4", true, ""), Status());
    ASSERT_EQ(engine->set_node_up("n5", true, ""), Status());
    ASSERT_EQ(engine->set_node_up("n2", false, "gone"), Status());
    run_job(test::rigid_spec(1));
  }

  std::vector<std::string> all_pages(proto::NodesQuery query, PageBounds bounds, int* pages) {
    std::vector<std::string> names;
    *pages = 0;
    while (true) {
      const proto::NodeList page = nodes_page(engine->cluster(), query, bounds, details);
      ++*pages;
      EXPECT_LE(page.nodes.size(), bounds.items);
      for (const auto& node : page.nodes) {
        names.push_back(node.name);
        EXPECT_EQ(node.hostname, node.name + ".example") << "details added";
        states.push_back(node.state);
      }
      if (!page.next_cursor || *pages > 100) break;
      query.cursor = page.next_cursor;
    }
    return names;
  }

  NodeDetails details = [](const Node& node, proto::NodeInfo& info) {
    info.hostname = node.name + ".example";
  };
  std::vector<std::string> states;
};

TEST_F(NodesPages, PagesJoinToEveryNodeInRegistrationOrder) {
  using Names = std::vector<std::string>;
  int pages = 0;
  const Names all = {"n3", "n1", "n10", "gpu1", "n2", "n4", "n5"};
  EXPECT_EQ(all_pages({}, PageBounds{1000, 2 << 20}, &pages), all);
  EXPECT_EQ(pages, 1);
  EXPECT_EQ(all_pages({}, PageBounds{2, 2 << 20}, &pages), all);
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(all_pages({}, PageBounds{1000, 1}, &pages), all);
  EXPECT_EQ(pages, 7);
}

TEST_F(NodesPages, FiltersApplyInSchedd) {
  using Names = std::vector<std::string>;
  int pages = 0;
  proto::NodesQuery query;
  query.states = {"idle"};
  const Names idle = all_pages(query, PageBounds{1, 2 << 20}, &pages);
  for (const std::string& state : states) EXPECT_EQ(state, "idle");
  EXPECT_EQ(idle.size(), 4u) << "7 nodes: one drained, one down, one running a job";
  states.clear();
  query.states = {"drain", "down"};
  EXPECT_EQ(all_pages(query, PageBounds{1, 2 << 20}, &pages), (Names{"n1", "n2"}));
  EXPECT_EQ(states, (Names{"drain", "down"}));
  query = {};
  query.names = {"n10", "gpu1", "n99"};
  EXPECT_EQ(all_pages(query, PageBounds{1, 2 << 20}, &pages), (Names{"n10", "gpu1"}));
  EXPECT_EQ(pages, 2);
}

// The state a node's details give (an invasive partition's "mixed") is the one
// filtered on, not the node-level one.
TEST_F(NodesPages, TheStateFilterSeesTheDetailsState) {
  using Names = std::vector<std::string>;
  details = [](const Node& node, proto::NodeInfo& info) {
    info.hostname = node.name + ".example";
    if (info.state == "alloc") info.state = "mixed";
  };
  int pages = 0;
  proto::NodesQuery query;
  query.states = {"mixed"};
  const Names mixed = all_pages(query, PageBounds{1000, 2 << 20}, &pages);
  ASSERT_EQ(mixed.size(), 1u) << "the one node running a job";
  EXPECT_EQ(states, (Names{"mixed"}));
  query.states = {"alloc"};
  EXPECT_TRUE(all_pages(query, PageBounds{1000, 2 << 20}, &pages).empty());
}

TEST_F(NodesPages, ForeignCursorsAndStatesAreRefused) {
  for (const char* bad : {"i7", "i", "x1", "i-1", "i1.2"}) {
    proto::NodesQuery query;
    query.cursor = bad;
    EXPECT_EQ(invalid_message([&] {
                nodes_page(engine->cluster(), query, PageBounds{}, details);
              }).rfind("invalid: cursor: '", 0),
              0u)
        << bad;
  }
  proto::NodesQuery query;
  query.states = {"mix"};
  EXPECT_EQ(invalid_message([&] { nodes_page(engine->cluster(), query, PageBounds{}, details); }),
            "invalid: unknown node state 'mix' (idle, alloc, mixed, drain, draining, down)");
}

}  // namespace
}  // namespace sched::daemon
