// sbatch's --dependency, --begin and --hold (issue 18): how the options read,
// their errors, and what build_submission makes of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job_script.hpp"
#include "slurm_time.hpp"
#include "submit_options.hpp"
#include "test_cli_support.hpp"

namespace sched::cli {
namespace {

// 2026-11-24T10:00:00 UTC.
constexpr double kNow = 1795514400;

std::string error_of(const std::vector<std::string>& words) {
  SubmitOptions options;
  return apply_arguments(options, words).value_or("(no error)");
}

TEST(CliBeginTime, ReadsSbatchForms) {
  testing::ScopedTimeZone utc("UTC");
  EXPECT_EQ(parse_begin_time("now", kNow), kNow);
  EXPECT_EQ(parse_begin_time("now+60", kNow), kNow + 60) << "seconds without a unit";
  EXPECT_EQ(parse_begin_time("now+1hour", kNow), kNow + 3600);
  EXPECT_EQ(parse_begin_time("now+2hours", kNow), kNow + 7200);
  EXPECT_EQ(parse_begin_time("now+10minutes", kNow), kNow + 600);
  EXPECT_EQ(parse_begin_time("now+3days", kNow), kNow + 3 * 86400);
  EXPECT_EQ(parse_begin_time("now+1week", kNow), kNow + 604800);
  EXPECT_EQ(parse_begin_time("16:00", kNow), kNow + 6 * 3600) << "today, still ahead";
  EXPECT_EQ(parse_begin_time("09:30", kNow), kNow + 23.5 * 3600) << "passed: tomorrow";
  EXPECT_EQ(parse_begin_time("16:00:30", kNow), kNow + 6 * 3600 + 30);
  EXPECT_EQ(parse_begin_time("teatime", kNow), kNow + 6 * 3600);
  EXPECT_EQ(parse_begin_time("noon", kNow), kNow + 2 * 3600);
  EXPECT_EQ(parse_begin_time("midnight", kNow), kNow + 14 * 3600);
  EXPECT_EQ(parse_begin_time("tomorrow", kNow), kNow + 14 * 3600);
  EXPECT_EQ(parse_begin_time("2026-11-24T16:00:00", kNow), kNow + 6 * 3600);
  EXPECT_EQ(parse_begin_time("2026-11-25", kNow), kNow + 14 * 3600);
  EXPECT_EQ(parse_begin_time("2026-11-24T16:00", kNow), kNow + 6 * 3600);
}

TEST(CliBeginTime, RejectsWhatIsNoTime) {
  testing::ScopedTimeZone utc("UTC");
  for (const char* bad : {"", "later", "now+", "now+5fortnights", "now-5", "25:00", "12:60",
                          "2026-13-01", "2026-02-31", "2026-11-24T", "2026-11-24T16", "1:2:3:4"}) {
    EXPECT_EQ(parse_begin_time(bad, kNow), std::nullopt) << bad;
  }
}

TEST(CliDependencyOptions, ReadAndKept) {
  SubmitOptions options;
  ASSERT_FALSE(apply_arguments(
      options, {"--dependency=afterok:12:13,singleton", "-H", "--begin", "now+1hour"}));
  EXPECT_EQ(options.dependency, "afterok:12:13,singleton");
  EXPECT_EQ(options.hold, true);
  EXPECT_EQ(options.begin, "now+1hour");
  SubmitOptions short_form;
  ASSERT_FALSE(apply_arguments(short_form, {"-d", "afterany:4?afternotok:5", "-b", "16:00"}));
  EXPECT_EQ(short_form.dependency, "afterany:4?afternotok:5");
  EXPECT_EQ(short_form.begin, "16:00");

  const Submission built = build_submission(options, "true", {}, kNow);
  ASSERT_FALSE(built.error) << *built.error;
  EXPECT_EQ(built.spec.extra->dependency, "afterok:12:13,singleton");
  EXPECT_TRUE(built.spec.hold);
  EXPECT_EQ(built.spec.extra->begin_time, kNow + 3600);

  SubmitOptions past;
  ASSERT_FALSE(apply_arguments(past, {"--begin=2020-01-01"}));
  EXPECT_EQ(build_submission(past, "true", {}, kNow).spec.extra->begin_time, 0)
      << "a past time: at once";
}

TEST(CliDependencyOptions, ErrorsNameTheBadPart) {
  EXPECT_EQ(error_of({"--dependency=afterok:abc"}),
            "--dependency: dependency 'afterok:abc': 'abc' is not a job id");
  EXPECT_NE(error_of({"--dependency=before:1"}).find("unknown type 'before'"), std::string::npos);
  EXPECT_NE(error_of({"-d", "afterok:1,afterok:2?afterok:3"}).find("cannot be mixed"),
            std::string::npos);
  EXPECT_NE(error_of({"--begin=soon"}).find("--begin: 'soon' is not a time"), std::string::npos);
  EXPECT_EQ(error_of({"--hold=yes"}), "--hold takes no value");
}

TEST(CliDependencyOptions, ScriptDirectivesAndTheCommandLineMerge) {
  const std::string script =
      "#!/bin/sh\n#SBATCH --dependency=afterok:7\n#SBATCH --hold\n#SCHED --begin=now+60\ntrue\n";
  SubmitOptions command_line;
  ASSERT_FALSE(apply_arguments(command_line, {"--dependency=afterany:8"}));
  const Submission built = submission_from_script(script, command_line, {}, kNow);
  ASSERT_FALSE(built.error) << *built.error;
  EXPECT_EQ(built.spec.extra->dependency, "afterany:8") << "the command line wins";
  EXPECT_TRUE(built.spec.hold);
  EXPECT_EQ(built.spec.extra->begin_time, kNow + 60);
}

}  // namespace
}  // namespace sched::cli
