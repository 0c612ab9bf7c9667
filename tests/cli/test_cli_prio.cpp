// `sched prio`'s table (issue 18 item 5), laid out as sprio lays out its own.
#include <gtest/gtest.h>

#include <string>

#include "prio_table.hpp"

namespace sched::cli {
namespace {

TEST(CliPrio, OneLinePerJobNumbersRightAligned) {
  const std::vector<PrioRow> rows = {
      {7, "bob", 1000, 0, 1000, 0, 0, 0},
      {6, "alice", 240, 0, 250, 0, 0, 10},
  };
  EXPECT_EQ(render_prio(rows),
            "JOBID  USER   PRIORITY  AGE  FAIRSHARE  JOBSIZE  QOS  NICE\n"
            "    7  bob        1000    0       1000        0    0     0\n"
            "    6  alice       240    0        250        0    0    10\n");
}

TEST(CliPrio, WeightsLineFirstAsSprioW) {
  const PrioWeights weights{100, 1000, 10, 2000};
  EXPECT_EQ(render_prio_weights(weights),
            "  JOBID  USER  PRIORITY  AGE  FAIRSHARE  JOBSIZE   QOS  NICE\n"
            "Weights                  100       1000       10  2000\n");
  const std::string with_jobs = render_prio({{3, "carol", -5, 0, 0, 0, 0, 5}}, &weights);
  EXPECT_NE(with_jobs.find("\nWeights "), std::string::npos) << with_jobs;
  EXPECT_NE(with_jobs.find("      3  carol        -5"), std::string::npos) << with_jobs;
}

TEST(CliPrio, EmptyQueueIsTheHeader) {
  EXPECT_EQ(render_prio({}), "JOBID  USER  PRIORITY  AGE  FAIRSHARE  JOBSIZE  QOS  NICE\n");
}

}  // namespace
}  // namespace sched::cli
