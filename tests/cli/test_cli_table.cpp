// The table writer and the state codes of squeue and sinfo.
#include <gtest/gtest.h>

#include <stdexcept>

#include "state_codes.hpp"
#include "table.hpp"

namespace sched::cli {
namespace {

TEST(CliTable, AlignsColumnsLeftAndRight) {
  Table table({{"NAME", Align::Left}, {"NODES", Align::Right}, {"WHERE", Align::Left}});
  table.add_row({"a", "4", "n[1-4]"});
  table.add_row({"longer-name", "128", "x"});
  EXPECT_EQ(table.render(),
            "NAME         NODES  WHERE\n"
            "a                4  n[1-4]\n"
            "longer-name    128  x\n");
  EXPECT_EQ(table.row_count(), 2u);
}

TEST(CliTable, NoTrailingSpaces) {
  Table table({{"A", Align::Left}, {"B", Align::Left}});
  table.add_row({"x", ""});
  table.add_row({"wide", "y"});
  EXPECT_EQ(table.render(),
            "A     B\n"
            "x\n"
            "wide  y\n");
}

TEST(CliTable, RightAlignedHeaderAndGap) {
  Table table({{"ID", Align::Right}, {"ST", Align::Left}}, 1);
  table.add_row({"12345", "R"});
  EXPECT_EQ(table.render(),
            "   ID ST\n"
            "12345 R\n");
}

TEST(CliTable, HeaderOnlyWithoutRows) {
  Table table({{"JOBID", Align::Right}, {"NAME", Align::Left}});
  EXPECT_EQ(table.render(), "JOBID  NAME\n");
}

TEST(CliTable, UnderlinesLikeSacct) {
  Table table({{"JobID", Align::Left}, {"State", Align::Left}});
  table.set_underline(true);
  table.add_row({"7", "COMPLETED"});
  EXPECT_EQ(table.render(),
            "JobID  State\n"
            "-----  ---------\n"
            "7      COMPLETED\n");
}

TEST(CliTable, RejectsRowsOfTheWrongSize) {
  Table table({{"A", Align::Left}, {"B", Align::Left}});
  EXPECT_THROW(table.add_row({"only one"}), std::invalid_argument);
  EXPECT_THROW(table.add_row({"1", "2", "3"}), std::invalid_argument);
}

TEST(CliTable, CountsUtf8CodePoints) {
  EXPECT_EQ(display_width("Zoë"), 3u);
  EXPECT_EQ(display_width(""), 0u);
  Table table({{"USER", Align::Left}, {"N", Align::Right}});
  table.add_row({"Zoë", "1"});
  table.add_row({"bob", "2"});
  EXPECT_EQ(table.render(),
            "USER  N\n"
            "Zoë   1\n"
            "bob   2\n");
}

TEST(CliTable, SqueueStateCodes) {
  EXPECT_EQ(state_code(JobState::Pending), "PD");
  EXPECT_EQ(state_code(JobState::Starting), "CF");
  EXPECT_EQ(state_code(JobState::Running), "R");
  EXPECT_EQ(state_code(JobState::Adapting), "AD");
  EXPECT_EQ(state_code(JobState::Completing), "CG");
  EXPECT_EQ(state_code(JobState::Completed), "CD");
  EXPECT_EQ(state_code(JobState::Failed), "F");
  EXPECT_EQ(state_code(JobState::Cancelled), "CA");
  EXPECT_EQ(state_code(JobState::Timeout), "TO");
  EXPECT_EQ(state_code(JobState::Suspended), "S");  // as squeue shows it
}

TEST(CliTable, SuspendedIsFilteredBySOrItsName) {
  EXPECT_EQ(parse_state_filter("S"), JobState::Suspended);
  EXPECT_EQ(parse_state_filter("suspended"), JobState::Suspended);
}

TEST(CliTable, StateFiltersTakeCodesOrNames) {
  EXPECT_EQ(parse_state_filter("PD"), JobState::Pending);
  EXPECT_EQ(parse_state_filter("pd"), JobState::Pending);
  EXPECT_EQ(parse_state_filter("pending"), JobState::Pending);
  EXPECT_EQ(parse_state_filter("Running"), JobState::Running);
  EXPECT_EQ(parse_state_filter("ad"), JobState::Adapting);
  EXPECT_EQ(parse_state_filter("TIMEOUT"), JobState::Timeout);
  EXPECT_EQ(parse_state_filter("bogus"), std::nullopt);
  EXPECT_EQ(parse_state_filter(""), std::nullopt);
  for (int i = 0; i <= static_cast<int>(JobState::Timeout); ++i) {
    const auto state = static_cast<JobState>(i);
    EXPECT_EQ(parse_state_filter(state_code(state)), state);
    EXPECT_EQ(parse_state_filter(to_string(state)), state);
  }
}

TEST(CliTable, NodeStatesAsSinfoPrintsThem) {
  EXPECT_EQ(to_sinfo(NodeState::Idle), "idle");
  EXPECT_EQ(to_sinfo(NodeState::Mixed), "mix");
  EXPECT_EQ(to_sinfo(NodeState::Allocated), "alloc");
  EXPECT_EQ(to_sinfo(NodeState::Draining), "drng");
  EXPECT_EQ(to_sinfo(NodeState::Drained), "drain");
  EXPECT_EQ(to_sinfo(NodeState::Down), "down");

  EXPECT_EQ(classify_node(true, false, 0, 8), NodeState::Idle);
  EXPECT_EQ(classify_node(true, false, 8, 8), NodeState::Allocated);
  EXPECT_EQ(classify_node(true, false, 3, 8), NodeState::Mixed);
  EXPECT_EQ(classify_node(true, true, 8, 8), NodeState::Draining) << "jobs still on it";
  EXPECT_EQ(classify_node(true, true, 0, 8), NodeState::Drained);
  EXPECT_EQ(classify_node(false, true, 8, 8), NodeState::Down) << "down wins";
  EXPECT_EQ(classify_node(false, false, 0, 8), NodeState::Down);
}

}  // namespace
}  // namespace sched::cli
