// Job arrays (issue 18 item 1): --array parsing, consecutive task ids, the
// %N throttle, cancelling an array or one task, dependencies on an array.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/job_array.hpp"

namespace sched::test {
namespace {

TEST(JobArrayParse, RangesStepsListsAndThrottle) {
  auto range = parse_job_array("0-4", kDefaultMaxArraySize);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->indices, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(range->throttle, 0);
  EXPECT_EQ(range->step, 1);

  auto stepped = parse_job_array("0-9:3%2", kDefaultMaxArraySize);
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  EXPECT_EQ(stepped->indices, (std::vector<int>{0, 3, 6, 9}));
  EXPECT_EQ(stepped->throttle, 2);
  EXPECT_EQ(stepped->step, 3);
  EXPECT_EQ(stepped->min(), 0);
  EXPECT_EQ(stepped->max(), 9);

  auto list = parse_job_array("7,1,3-4", kDefaultMaxArraySize);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->indices, (std::vector<int>{1, 3, 4, 7}));
  EXPECT_EQ(list->step, 0) << "a list has no single step";

  auto top = parse_job_array("10000", kDefaultMaxArraySize);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->count(), 1);
}

TEST(JobArrayParse, BadSpecsNameTheBadPart) {
  const auto error = [](const char* text, int limit = kDefaultMaxArraySize) {
    auto parsed = parse_job_array(text, limit);
    EXPECT_FALSE(parsed.ok()) << text;
    return parsed.ok() ? std::string() : parsed.status().message();
  };
  EXPECT_NE(error("").find("empty"), std::string::npos);
  EXPECT_NE(error("5-1").find("range 5-1 is reversed"), std::string::npos);
  EXPECT_NE(error("0-9:0").find("step in '0-9:0'"), std::string::npos);
  EXPECT_NE(error("0-10001").find("index 10001 is above the limit"), std::string::npos);
  EXPECT_NE(error("0-9", 5).find("max_array_size 5"), std::string::npos);
  EXPECT_NE(error("1,2,2").find("index 2 appears twice"), std::string::npos);
  EXPECT_NE(error("1-3,3").find("index 3 appears twice"), std::string::npos);
  EXPECT_NE(error("a-3").find("'a-3' is not an index"), std::string::npos);
  EXPECT_NE(error("-3").find("'-3' is not an index"), std::string::npos);
  EXPECT_NE(error("1,,2").find("empty element"), std::string::npos);
  EXPECT_NE(error("0-9%0").find("throttle '%0'"), std::string::npos);
  EXPECT_NE(error("0-9%x").find("throttle '%x'"), std::string::npos);
  EXPECT_NE(error("%4").find("no indices"), std::string::npos);
}

// A client checks against Slurm's largest limit, listing at most that many
// indices (a fuzzer once found `--array=0-2000000000` listing two billion).
TEST(JobArrayParse, AClientChecksAgainstSlurmsCeiling) {
  auto big = parse_job_array("0-4000000:2,1", kMaxArraySizeCeiling);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->count(), 2000002);
  EXPECT_EQ(big->indices[1], 1);
  auto over = parse_job_array("0-2000000000", kMaxArraySizeCeiling);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("above the limit"), std::string::npos);
}

class JobArrays : public EngineFixture {
 protected:
  void SetUp() override { init(8); }

  JobSpec array_spec(const std::string& array) {
    JobSpec spec = rigid_spec(1);
    spec.extra.edit().array = array;
    return spec;
  }
  std::vector<JobId> offered() {
    std::vector<JobId> ids;
    in_pass([&](PassContext& ctx) {
      for (const Job* job : ctx.pending()) ids.push_back(job->id);
    });
    return ids;
  }
  // Starts every job a pass offers; returns them.
  std::vector<JobId> start_offered() {
    std::vector<JobId> started;
    in_pass([&](PassContext& ctx) {
      std::vector<JobId> ids;
      for (const Job* job : ctx.pending()) ids.push_back(job->id);
      for (JobId id : ids) {
        if (!ctx.start(id)) started.push_back(id);
      }
    });
    for (JobId id : started) engine->job_started(id);
    return started;
  }
  int started_of(JobId array_id) const {
    int n = 0;
    for (JobId id : engine->array_tasks(array_id)) {
      const JobState s = engine->find_job(id)->state;
      n += s == JobState::Starting || s == JobState::Running || s == JobState::Adapting ||
           s == JobState::Completing;
    }
    return n;
  }
};

TEST_F(JobArrays, TasksGetConsecutiveIdsAndIndices) {
  const JobId before = submit(rigid_spec(1));
  const JobId a = submit(array_spec("3-9:2"));
  EXPECT_EQ(a, before + 1);
  const std::vector<JobId> tasks = engine->array_tasks(a);
  ASSERT_EQ(tasks, (std::vector<JobId>{a, a + 1, a + 2, a + 3}));
  const std::vector<int> indices{3, 5, 7, 9};
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_EQ(job(tasks[i]).spec.extra->array_job_id, a);
    EXPECT_EQ(job(tasks[i]).spec.extra->array_task_id, indices[i]);
    EXPECT_EQ(engine->array_task(a, indices[i]), tasks[i]);
  }
  EXPECT_EQ(engine->array_task(a, 4), std::nullopt);
  EXPECT_EQ(engine->array_task(before, 0), std::nullopt) << "not an array";
  EXPECT_EQ(submit(rigid_spec(1)), a + 4) << "the next job comes after the array";
  EXPECT_EQ(events.of_job(a + 3).front().type, EventType::JobSubmitted);
}

TEST_F(JobArrays, ABadArraySubmitsNothing) {
  const std::size_t jobs = engine->jobs().size();
  auto out = engine->submit(array_spec("0-3,2"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::Invalid);
  EXPECT_NE(out.status().message().find("index 2 appears twice"), std::string::npos);
  EXPECT_EQ(engine->jobs().size(), jobs);

  EngineConfig small;
  small.max_array_size = 4;
  init(8, small);
  auto over = engine->submit(array_spec("0-4"));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("index 4 is above the limit"), std::string::npos);
  EXPECT_TRUE(engine->jobs().empty());
}

TEST_F(JobArrays, TheThrottleNeverLetsMoreThanNStartAndTheNextStartsWhenOneEnds) {
  const JobId a = submit(array_spec("0-9%3"));
  EXPECT_EQ(offered(), (std::vector<JobId>{a, a + 1, a + 2})) << "only 3 of 8 free nodes offered";
  EXPECT_EQ(waiting_reason(job(a + 3)), "JobArrayTaskLimit");
  EXPECT_EQ(engine->pending_queue().listing_size(), 10u) << "the others are still listed";

  EXPECT_EQ(start_offered(), (std::vector<JobId>{a, a + 1, a + 2}));
  EXPECT_EQ(started_of(a), 3);
  EXPECT_TRUE(start_offered().empty()) << "nodes are free, the throttle holds";
  EXPECT_EQ(idle(), 5);

  int ended = 0;
  JobId next = a + 3;
  for (JobId running = a; running < a + 10; ++running) {
    engine->job_ended(running, 0);
    ++ended;
    const std::vector<JobId> started = start_offered();
    EXPECT_LE(started_of(a), 3);
    if (next < a + 10) {
      EXPECT_EQ(started, std::vector<JobId>{next}) << "the next task, in index order";
      ++next;
    } else {
      EXPECT_TRUE(started.empty());
    }
  }
  EXPECT_EQ(ended, 10);
  for (JobId id = a; id < a + 10; ++id) EXPECT_EQ(state(id), JobState::Completed);
}

TEST_F(JobArrays, ACancelledTaskGivesBackItsSlot) {
  const JobId a = submit(array_spec("0-5%2"));
  ASSERT_TRUE(engine->cancel(a + 4).ok()) << "a throttled task";
  ASSERT_TRUE(engine->cancel(a).ok()) << "an admitted one: the next comes in";
  EXPECT_EQ(offered(), (std::vector<JobId>{a + 1, a + 2}));
  EXPECT_EQ(waiting_reason(job(a + 3)), "JobArrayTaskLimit");
}

TEST_F(JobArrays, CancelTheWholeArrayOrOneTask) {
  const JobId a = submit(array_spec("0-5%2"));
  start_offered();
  ASSERT_TRUE(engine->cancel(*engine->array_task(a, 2)).ok()) << "one (throttled) task";
  EXPECT_EQ(state(a + 2), JobState::Cancelled);
  EXPECT_EQ(state(a + 3), JobState::Pending);

  engine->job_ended(a, 0);
  auto cancelled = engine->cancel_array(a);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(*cancelled, 4) << "the task that ran and the three left: not the ended ones";
  EXPECT_EQ(state(a), JobState::Completed);
  for (JobId id = a + 3; id <= a + 5; ++id) EXPECT_EQ(state(id), JobState::Cancelled);
  EXPECT_NE(state(a + 1), JobState::Running) << "the running one is stopping";
  EXPECT_TRUE(offered().empty());
  EXPECT_EQ(engine->cancel_array(a + 1).status().code(), StatusCode::NotFound) << "not an array id";
}

TEST_F(JobArrays, ADependencyOnTheArrayIdWaitsForAllItsTasks) {
  const JobId a = submit(array_spec("0-2"));
  JobSpec after = rigid_spec(1);
  after.extra.edit().dependency = "afterok:" + std::to_string(a);
  const JobId b = submit(after);
  start_offered();
  EXPECT_EQ(waiting_reason(job(b)), "Dependency");
  engine->job_ended(a, 0);
  EXPECT_EQ(waiting_reason(job(b)), "Dependency") << "task 0 alone is not the array";
  engine->job_ended(a + 1, 0);
  EXPECT_EQ(waiting_reason(job(b)), "Dependency");
  engine->job_ended(a + 2, 0);
  EXPECT_EQ(waiting_reason(job(b)), "") << "all three completed";

  const JobId c = submit(array_spec("0-1"));
  JobSpec broken = rigid_spec(1);
  broken.extra.edit().dependency = "afterok:" + std::to_string(c);
  const JobId d = submit(broken);
  start_offered();
  engine->job_ended(c + 1, 2);
  EXPECT_EQ(waiting_reason(job(d)), "DependencyNeverSatisfied") << "one task failed";
}

TEST_F(JobArrays, ARestoredArrayKeepsItsThrottle) {
  const JobId a = submit(array_spec("0-4%2"));
  start_offered();
  std::vector<Job> saved;
  for (JobId id : engine->array_tasks(a)) saved.push_back(job(id));
  init(8);
  // In id order, as schedd reads its journal.
  ASSERT_TRUE(engine->restore_job(saved[0], {"n0"}).ok());
  ASSERT_TRUE(engine->restore_job(saved[1], {"n1"}).ok());
  for (std::size_t i = 2; i < saved.size(); ++i)
    ASSERT_TRUE(engine->restore_job(saved[i], {}).ok());
  EXPECT_TRUE(offered().empty()) << "two tasks hold nodes: the throttle holds";
  EXPECT_EQ(waiting_reason(job(a + 2)), "JobArrayTaskLimit");
  EXPECT_EQ(engine->array_task(a, 3), a + 3);
  engine->job_ended(a, 0);
  EXPECT_EQ(offered(), std::vector<JobId>{a + 2});
}

}  // namespace
}  // namespace sched::test
