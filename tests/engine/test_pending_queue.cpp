// PendingQueue: two queues (rigid, elastic) ordered by urgency, then arrival.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/pending_queue.hpp"

namespace sched {
namespace {

// merged() gives ids or job pointers, depending on the version; compare ids.
[[maybe_unused]] JobId id_of(JobId id) { return id; }
[[maybe_unused]] JobId id_of(const Job* job) { return job->id; }
template <typename T>
std::vector<JobId> ids(const std::vector<T>& items) {
  std::vector<JobId> out;
  for (const T& item : items) out.push_back(id_of(item));
  return out;
}

class PendingQueueTest : public ::testing::Test {
 protected:
  // Jobs live in a deque: their addresses stay put while queued.
  const Job& add(JobId id, JobKind kind, double submit, bool urgent = false) {
    Job& job = jobs.emplace_back();
    job.id = id;
    job.spec.kind = kind;
    job.spec.urgent = urgent;
    job.submit_time = submit;
    queue.push(job);
    return job;
  }

  std::deque<Job> jobs;
  PendingQueue queue;
};

using PendingQueueOrder = PendingQueueTest;

TEST_F(PendingQueueOrder, EmptyQueue) {
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_TRUE(ids(queue.merged()).empty());
}

TEST_F(PendingQueueOrder, ArrivalOrderWithinOneQueue) {
  add(3, JobKind::Rigid, 30);
  add(1, JobKind::Rigid, 10);
  add(2, JobKind::Rigid, 20);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{1, 2, 3}));
}

TEST_F(PendingQueueOrder, SubmitTimeBeforeId) {
  add(1, JobKind::Rigid, 50);
  add(2, JobKind::Rigid, 40);  // a later id that arrived earlier (replayed)
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{2, 1}));
}

TEST_F(PendingQueueOrder, SameSubmitTimeThenId) {
  add(9, JobKind::Rigid, 5);
  add(4, JobKind::Rigid, 5);
  add(6, JobKind::Malleable, 5);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{4, 6, 9}));
}

TEST_F(PendingQueueOrder, UrgentJobsFirst) {
  add(1, JobKind::Rigid, 0);
  add(2, JobKind::Malleable, 1);
  add(3, JobKind::Rigid, 100, /*urgent=*/true);
  add(4, JobKind::Malleable, 50, /*urgent=*/true);
  add(5, JobKind::Rigid, 2);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{4, 3, 1, 2, 5}));
}

TEST_F(PendingQueueOrder, RigidAndElasticQueuesAreMerged) {
  add(1, JobKind::Malleable, 0);
  add(2, JobKind::Rigid, 1);
  add(3, JobKind::Moldable, 2);
  add(4, JobKind::Evolving, 3);
  add(5, JobKind::Malleable, 4);
  add(6, JobKind::Rigid, 5);
  EXPECT_EQ(queue.size(), 6u);
  EXPECT_EQ(queue.rigid_size(), 3u) << "rigid and moldable";
  EXPECT_EQ(queue.elastic_size(), 3u) << "malleable and evolving";
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{1, 2, 3, 4, 5, 6}));
}

TEST_F(PendingQueueOrder, OneQueueRunsOutFirst) {
  add(1, JobKind::Rigid, 0);
  add(2, JobKind::Malleable, 1);
  add(3, JobKind::Malleable, 2);
  add(4, JobKind::Malleable, 3);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{1, 2, 3, 4}));
  PendingQueue other;
  Job lone;
  lone.id = 7;
  lone.spec.kind = JobKind::Malleable;
  other.push(lone);
  EXPECT_EQ(ids(other.merged()), (std::vector<JobId>{7}));
}

TEST_F(PendingQueueOrder, EraseRemovesJustThatJob) {
  const Job& a = add(1, JobKind::Rigid, 0);
  const Job& b = add(2, JobKind::Malleable, 1);
  add(3, JobKind::Rigid, 2);
  queue.erase(a);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{2, 3}));
  queue.erase(b);
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{3}));
  EXPECT_EQ(queue.rigid_size(), 1u);
  EXPECT_EQ(queue.elastic_size(), 0u);
  queue.erase(b);  // not queued: nothing happens
  EXPECT_EQ(queue.size(), 1u);
  queue.push(a);  // back in its old place
  EXPECT_EQ(ids(queue.merged()), (std::vector<JobId>{1, 3}));
}

// cursor_after: the rest of the merged order after a job, whether the job is
// still queued (either queue) or has left it.
TEST_F(PendingQueueOrder, CursorAfterAJobGoesOnBehindIt) {
  add(1, JobKind::Malleable, 0);
  const Job& two = add(2, JobKind::Rigid, 1);
  const Job& three = add(3, JobKind::Moldable, 2);
  add(4, JobKind::Evolving, 3);
  add(5, JobKind::Rigid, 4, /*urgent=*/true);
  const auto rest = [&](const Job& job) {
    std::vector<JobId> out;
    PendingQueue::Cursor c = queue.cursor_after(job);
    while (const Job* next = c.next()) out.push_back(next->id);
    return out;
  };
  EXPECT_EQ(rest(two), (std::vector<JobId>{3, 4}));
  EXPECT_EQ(rest(jobs[4]), (std::vector<JobId>{1, 2, 3, 4})) << "after the urgent head";
  EXPECT_EQ(rest(jobs[3]), (std::vector<JobId>{}));
  queue.erase(three);  // gone from the queue: the listing goes on where it was
  EXPECT_EQ(rest(three), (std::vector<JobId>{4}));
  EXPECT_EQ(rest(two), (std::vector<JobId>{4}));
}

// count_of: each user's queued jobs, kept as jobs come and go (a job pushed
// twice or erased when not queued counts once, or not at all).
TEST_F(PendingQueueOrder, CountsEachUsersQueuedJobs) {
  const auto add_for = [&](JobId id, const std::string& user) -> const Job& {
    Job& job = jobs.emplace_back();
    job.id = id;
    job.spec.kind = id % 2 ? JobKind::Rigid : JobKind::Malleable;
    job.spec.user = user;
    job.submit_time = static_cast<double>(id);
    queue.push(job);
    return job;
  };
  const Job& a1 = add_for(1, "alice");
  const Job& a2 = add_for(2, "alice");
  const Job& b3 = add_for(3, "bob");
  EXPECT_EQ(queue.count_of("alice"), 2u);
  EXPECT_EQ(queue.count_of("bob"), 1u);
  EXPECT_EQ(queue.count_of("carol"), 0u);
  queue.push(a1);  // already queued
  EXPECT_EQ(queue.count_of("alice"), 2u);
  queue.erase(a2);
  queue.erase(a2);  // no longer queued
  EXPECT_EQ(queue.count_of("alice"), 1u);
  queue.erase(b3);
  EXPECT_EQ(queue.count_of("bob"), 0u);
  queue.erase(a1);
  EXPECT_EQ(queue.count_of("alice"), 0u);
  EXPECT_EQ(queue.size(), 0u);
}

// The engine's pending list and a pass's ctx.pending() follow the same order.
class PendingQueueEngine : public test::EngineFixture {
 protected:
  void SetUp() override { init(4); }
};

TEST_F(PendingQueueEngine, EngineListsPendingJobsInPriorityOrder) {
  clock.set(0);
  const JobId a = submit(test::rigid_spec(4));
  clock.set(1);
  const JobId b = submit(test::malleable_spec(2, 1, 4));
  clock.set(2);
  JobSpec urgent = test::rigid_spec(1);
  urgent.urgent = true;
  const JobId c = submit(urgent);
  clock.set(3);
  const JobId d = submit(test::moldable_spec(2, 1, 4));

  std::vector<JobId> listed;
  for (const Job* job : engine->pending_jobs()) listed.push_back(job->id);
  EXPECT_EQ(listed, (std::vector<JobId>{c, a, b, d}));
  EXPECT_EQ(engine->pending_queue().rigid_size(), 3u);
  EXPECT_EQ(engine->pending_queue().elastic_size(), 1u);

  std::vector<JobId> seen;
  in_pass([&](PassContext& ctx) {
    for (const Job* job : ctx.pending()) seen.push_back(job->id);
    EXPECT_EQ(ctx.start(c), std::nullopt);
    EXPECT_EQ(ctx.pending().size(), 4u) << "a snapshot: the start is enacted later";
  });
  EXPECT_EQ(seen, listed);

  listed.clear();
  for (const Job* job : engine->pending_jobs()) listed.push_back(job->id);
  EXPECT_EQ(listed, (std::vector<JobId>{a, b, d}));
  ASSERT_EQ(engine->cancel(b), Status());
  listed.clear();
  for (const Job* job : engine->pending_jobs()) listed.push_back(job->id);
  EXPECT_EQ(listed, (std::vector<JobId>{a, d}));
}

}  // namespace
}  // namespace sched
