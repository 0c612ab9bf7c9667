// sbatch's --array (issue 18 item 1): how the option reads, its errors, the
// directive form, and the "A_i" ids cancel/show take and queue shows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job_ids.hpp"
#include "job_script.hpp"
#include "submit_options.hpp"

namespace sched::cli {
namespace {

std::string error_of(const std::vector<std::string>& words) {
  SubmitOptions options;
  return apply_arguments(options, words).value_or("(no error)");
}

TEST(CliArrayOptions, ReadAndKept) {
  for (const char* spec : {"0-99", "0-99:2", "1,3,5-7", "0-19%4", "0-99:2%10"}) {
    SubmitOptions options;
    ASSERT_FALSE(apply_arguments(options, {std::string("--array=") + spec})) << spec;
    EXPECT_EQ(options.array, spec);
    EXPECT_EQ(build_submission(options, "true").spec.extra->array, spec);
  }
  SubmitOptions short_form;
  ASSERT_FALSE(apply_arguments(short_form, {"-a", "3-5"}));
  EXPECT_EQ(short_form.array, "3-5");
  SubmitOptions none;
  EXPECT_EQ(build_submission(none, "true").spec.extra->array, "") << "not an array";
}

TEST(CliArrayOptions, BadSpecsAreUsageErrorsNamingTheBadPart) {
  EXPECT_EQ(error_of({"--array="}), "--array needs a value");
  EXPECT_EQ(error_of({"--array=9-3"}), "--array: array '9-3': range 9-3 is reversed");
  EXPECT_NE(error_of({"--array=0-9:0"}).find("step in '0-9:0' must be a positive number"),
            std::string::npos);
  EXPECT_NE(error_of({"--array=1,2,1"}).find("index 1 appears twice"), std::string::npos);
  EXPECT_NE(error_of({"--array=1-x"}).find("'1-x' is not an index or range"), std::string::npos);
  EXPECT_NE(error_of({"--array=0-9%0"}).find("throttle '%0'"), std::string::npos);
  EXPECT_EQ(error_of({"-a"}), "-a needs a value");
}

TEST(CliArrayOptions, ScriptDirectivesAndTheCommandLineMerge) {
  const std::string script = "#!/bin/sh\n#SBATCH --array=0-19%4\n#SBATCH -o out-%A_%a.txt\ntrue\n";
  const Submission built = submission_from_script(script, {}, {}, 0);
  ASSERT_FALSE(built.error) << *built.error;
  EXPECT_EQ(built.spec.extra->array, "0-19%4");
  EXPECT_EQ(built.spec.extra->output, "out-%A_%a.txt");

  SubmitOptions command_line;
  ASSERT_FALSE(apply_arguments(command_line, {"--array=1-3"}));
  EXPECT_EQ(submission_from_script(script, command_line, {}, 0).spec.extra->array, "1-3")
      << "the command line wins";
  const Submission sched_dialect =
      submission_from_script("#!/bin/sh\n#SCHED -a 5,7\ntrue\n", {}, {}, 0);
  EXPECT_EQ(sched_dialect.spec.extra->array, "5,7");
  const Submission bad =
      submission_from_script("#!/bin/sh\n#SBATCH --array=5-1\ntrue\n", {}, {}, 0);
  ASSERT_TRUE(bad.error);
  EXPECT_NE(bad.error->find("range 5-1 is reversed"), std::string::npos) << *bad.error;
}

TEST(CliJobIds, ArrayTasksAndLists) {
  const auto refs = parse_job_refs({"12", "13_4,14", "15_[1-3,7]"});
  ASSERT_EQ(refs.size(), 7u);
  EXPECT_EQ(refs[0].text(), "12");
  EXPECT_FALSE(refs[0].task);
  EXPECT_EQ(refs[1].id, 13);
  EXPECT_EQ(refs[1].task, 4);
  EXPECT_EQ(refs[2].text(), "14");
  EXPECT_EQ(refs[3].text(), "15_1");
  EXPECT_EQ(refs[6].text(), "15_7");
  for (const char* bad : {"x", "0", "12_", "12_x", "12_[3-1]", "_3", "12_[1-3%2]"}) {
    EXPECT_THROW(parse_job_refs({bad}), std::runtime_error) << bad;
  }
}

TEST(CliJobIds, PendingTasksOfAnArrayShowAsOneName) {
  EXPECT_EQ(pending_array_name(40, {5, 6, 7, 8}, 4), "40_[5-8%4]");
  EXPECT_EQ(pending_array_name(40, {1, 3, 4, 9}, 0), "40_[1,3-4,9]");
  EXPECT_EQ(pending_array_name(40, {3}, 0), "40_3");
  EXPECT_EQ(pending_array_name(40, {3}, 2), "40_[3%2]");
}

}  // namespace
}  // namespace sched::cli
