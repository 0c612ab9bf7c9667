// Boxed<T> (sched/boxed.hpp): the job record's out-of-line fields (issue 15).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched/boxed.hpp"
#include "sched/job.hpp"

namespace sched {
namespace {

struct Sample {
  std::string text;
  int count = 7;
  std::vector<int> list;
  bool operator==(const Sample&) const = default;
};

TEST(Boxed, AnEmptyBoxReadsTheDefaultAndHoldsNothing) {
  const Boxed<Sample> box;
  EXPECT_FALSE(box.has_value());
  EXPECT_EQ(box->text, "");
  EXPECT_EQ(box->count, 7);
  EXPECT_TRUE((*box).list.empty());
  EXPECT_EQ(sizeof(box), sizeof(void*));
}

TEST(Boxed, EditAllocatesAndKeepsWhatWasWritten) {
  Boxed<Sample> box;
  box.edit().text = "out.log";
  EXPECT_TRUE(box.has_value());
  EXPECT_EQ(box->text, "out.log");
  EXPECT_EQ(box->count, 7);  // the rest of a new value is its default
  box.edit().count = 3;
  EXPECT_EQ(box->text, "out.log");
  EXPECT_EQ(box->count, 3);
}

TEST(Boxed, ACopyIsItsOwnValue) {
  Boxed<Sample> a;
  a.edit().list = {1, 2};
  Boxed<Sample> b = a;
  b.edit().list.push_back(3);
  EXPECT_EQ(a->list, (std::vector<int>{1, 2}));
  EXPECT_EQ(b->list, (std::vector<int>{1, 2, 3}));

  Boxed<Sample> empty;
  b = empty;  // assigning an empty box empties it
  EXPECT_FALSE(b.has_value());
  EXPECT_TRUE(b->list.empty());
  const Boxed<Sample>& same = a;
  a = same;  // self-assignment keeps the value
  EXPECT_EQ(a->list, (std::vector<int>{1, 2}));

  Boxed<Sample> moved = std::move(a);
  EXPECT_EQ(moved->list, (std::vector<int>{1, 2}));
}

TEST(Boxed, AnEmptyBoxEqualsAWrittenDefault) {
  Boxed<Sample> empty;
  Boxed<Sample> written;
  written.edit().count = 7;
  EXPECT_TRUE(empty == written);
  written.edit().count = 8;
  EXPECT_FALSE(empty == written);
}

TEST(Boxed, ResetIfDefaultFreesOnlyADefaultValue) {
  Boxed<Sample> box;
  box.edit().text = "";
  box.reset_if_default();
  EXPECT_FALSE(box.has_value());
  box.edit().text = "x";
  box.reset_if_default();
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->text, "x");
}

// The job record reads its out-of-line fields' defaults as it did inline, and
// a copy of a job carries them.
TEST(Boxed, AJobReadsItsDefaultsAndCopiesItsExtras) {
  Job job;
  EXPECT_EQ(job.spec.extra->array_task_id, -1);
  EXPECT_EQ(job.spec.layout->cpus_per_task, 1);
  EXPECT_EQ(job.run->suspended_since, -1);
  EXPECT_EQ(job.run->adapting_since, -1);
  EXPECT_FALSE(job.run->mtct);
  EXPECT_FALSE(job.spec.extra.has_value());
  EXPECT_FALSE(job.run.has_value());

  job.spec.extra.edit().output = "o-%j.log";
  job.run.edit().mtct = 0.25;
  const Job copy = job;
  job.spec.extra.edit().output = "changed";
  EXPECT_EQ(copy.spec.extra->output, "o-%j.log");
  EXPECT_EQ(copy.run->mtct, 0.25);
}

TEST(Boxed, NormalizeSpecDropsBoxesThatHoldOnlyDefaults) {
  JobSpec spec;
  spec.extra.edit().output = "";
  spec.layout.edit().cpus_per_task = 1;
  ASSERT_FALSE(normalize_spec(spec));
  EXPECT_FALSE(spec.extra.has_value());
  EXPECT_FALSE(spec.layout.has_value());

  spec.extra.edit().account = "physics";
  ASSERT_FALSE(normalize_spec(spec));
  EXPECT_EQ(spec.extra->account, "physics");
}

}  // namespace
}  // namespace sched
