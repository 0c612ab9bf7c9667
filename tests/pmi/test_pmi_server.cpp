#include <gtest/gtest.h>

#include "sched/pmi/server.hpp"
#include "sched/pmi/wire.hpp"

namespace sched::pmi {
namespace {

StepInfo two_local_of_four() {
  StepInfo info;
  info.kvsname = "sched-7.1";
  info.size = 4;
  info.local_ranks = {1, 3};
  info.preset["PMI_process_mapping"] = "(vector,(0,2,1),(0,2,1))";
  return info;
}

// Sends one line and returns the parsed answer (none expected: nullopt).
std::optional<Command> ask(NodeServer& server, int rank, const std::string& line) {
  server.receive(rank, line + "\n");
  const std::string out = server.take_output(rank);
  if (out.empty()) return std::nullopt;
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "one answer per line: " << out;
  std::string why;
  auto c = parse(out.substr(0, out.size() - 1), &why);
  EXPECT_TRUE(c) << why << ": " << out;
  return c;
}

std::string arg(const std::optional<Command>& c, const char* key) {
  if (!c || !c->find(key)) return "<none>";
  return *c->find(key);
}

TEST(PmiServer, AnswersTheInitSequenceOfMpich) {
  NodeServer server(two_local_of_four());
  auto r = ask(server, 1, "cmd=init pmi_version=1 pmi_subversion=1");
  EXPECT_EQ(r->name, "response_to_init");
  EXPECT_EQ(arg(r, "rc"), "0");
  EXPECT_TRUE(server.initialized(1));
  EXPECT_FALSE(server.initialized(3));
  r = ask(server, 1, "cmd=get_maxes");
  EXPECT_EQ(r->name, "maxes");
  EXPECT_EQ(arg(r, "vallen_max"), std::to_string(kValueMax));
  EXPECT_EQ(arg(ask(server, 1, "cmd=get_appnum"), "appnum"), "0");
  EXPECT_EQ(arg(ask(server, 1, "cmd=get_my_kvsname"), "kvsname"), "sched-7.1");
  EXPECT_EQ(arg(ask(server, 1, "cmd=get_universe_size"), "size"), "4");
  r = ask(server, 1, "cmd=get kvsname=sched-7.1 key=PMI_process_mapping");
  EXPECT_EQ(arg(r, "rc"), "0");
  EXPECT_EQ(arg(r, "value"), "(vector,(0,2,1),(0,2,1))");
}

TEST(PmiServer, TwoCommandsInOneReadAndALineSplitOverReads) {
  NodeServer server(two_local_of_four());
  server.receive(1, "cmd=get_appnum\ncmd=get_my_");
  EXPECT_EQ(server.take_output(1), "cmd=appnum appnum=0 rc=0\n");
  server.receive(1, "kvsname\n");
  EXPECT_EQ(server.take_output(1), "cmd=my_kvsname kvsname=sched-7.1 rc=0\n");
}

TEST(PmiServer, FenceGathersLocalPutsOnceEveryLocalRankIsIn) {
  NodeServer server(two_local_of_four());
  EXPECT_EQ(arg(ask(server, 1, "cmd=put kvsname=sched-7.1 key=bc-1 value=addr1"), "rc"), "0");
  EXPECT_EQ(arg(ask(server, 3, "cmd=put kvsname=sched-7.1 key=bc-3 value=addr3"), "rc"), "0");
  EXPECT_FALSE(ask(server, 1, "cmd=barrier_in"));  // no answer until the fence is done
  EXPECT_FALSE(server.take_fence());               // rank 3 has not come
  EXPECT_FALSE(ask(server, 3, "cmd=barrier_in"));
  const auto entries = server.take_fence();
  ASSERT_TRUE(entries);
  EXPECT_EQ(server.fences(), 1);
  EXPECT_EQ(*entries, (std::map<std::string, std::string>{{"bc-1", "addr1"}, {"bc-3", "addr3"}}));
  EXPECT_FALSE(server.take_fence());  // handed over once
  // Entries from the other node arrive with the fence's end.
  server.fence_done({{"bc-0", "addr0"}, {"bc-1", "addr1"}, {"bc-2", "addr2"}, {"bc-3", "addr3"}});
  EXPECT_EQ(server.take_output(1), "cmd=barrier_out rc=0\n");
  EXPECT_EQ(server.take_output(3), "cmd=barrier_out rc=0\n");
  EXPECT_EQ(arg(ask(server, 3, "cmd=get kvsname=sched-7.1 key=bc-0"), "value"), "addr0");
  server.fence_done({});  // a repeated answer changes nothing
  EXPECT_EQ(server.take_output(1), "");
  // The next fence carries only what was put since.
  ask(server, 1, "cmd=barrier_in");
  ask(server, 3, "cmd=barrier_in");
  const auto second = server.take_fence();
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->empty());
  EXPECT_EQ(server.fences(), 2);
}

TEST(PmiServer, FinalizedOrGoneRanksDoNotHoldABarrier) {
  NodeServer server(two_local_of_four());
  EXPECT_EQ(ask(server, 3, "cmd=finalize")->name, "finalize_ack");
  EXPECT_TRUE(server.finalized(3));
  ask(server, 1, "cmd=barrier_in");
  EXPECT_TRUE(server.take_fence());
  NodeServer other(two_local_of_four());
  other.disconnect(3);
  ask(other, 1, "cmd=barrier_in");
  EXPECT_TRUE(other.take_fence());
  EXPECT_FALSE(other.finalized(3));
}

TEST(PmiServer, GetOfAMissingKeyOrForeignSpaceIsAnError) {
  NodeServer server(two_local_of_four());
  EXPECT_EQ(arg(ask(server, 1, "cmd=get kvsname=sched-7.1 key=nope"), "rc"), "-1");
  EXPECT_EQ(arg(ask(server, 1, "cmd=get kvsname=other key=PMI_process_mapping"), "rc"), "-1");
  EXPECT_EQ(arg(ask(server, 1, "cmd=put kvsname=other key=a value=b"), "rc"), "-1");
  EXPECT_EQ(arg(ask(server, 1, "cmd=put kvsname=sched-7.1 key=a"), "rc"), "-1");
  const std::string huge(kValueMax + 1, 'v');
  EXPECT_EQ(arg(ask(server, 1, "cmd=put kvsname=sched-7.1 key=a value=" + huge), "rc"), "-1");
  EXPECT_FALSE(server.failure());
}

TEST(PmiServer, MalformedOrUnknownInputGetsAnErrorAnswer) {
  NodeServer server(two_local_of_four());
  for (const char* bad : {"garbage", "cmd=", "cmd=frobnicate", "mcmd=spawn", "=", "cmd=put =1"}) {
    const auto r = ask(server, 1, bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(arg(r, "rc"), "-1") << bad;
  }
  EXPECT_EQ(arg(ask(server, 1, "cmd=spawn nprocs=2"), "rc"), "-1");
  // An endless line is dropped with one error, and the connection goes on.
  server.receive(1, std::string(kMaxLine + 10, 'x'));
  EXPECT_NE(server.take_output(1).find("rc=-1"), std::string::npos);
  EXPECT_EQ(ask(server, 1, "cmd=get_appnum")->name, "appnum");
  // Unknown ranks are ignored.
  server.receive(2, "cmd=init\n");
  EXPECT_EQ(server.take_output(2), "");
  EXPECT_FALSE(server.failure());
}

TEST(PmiServer, AbortFailsTheStepWithTheRanksReason) {
  NodeServer server(two_local_of_four());
  ask(server, 3, "cmd=abort exitcode=3 msg=bad_input");
  ASSERT_TRUE(server.failure());
  EXPECT_EQ(server.failure()->rank, 3);
  EXPECT_EQ(server.failure()->message, "rank 3 aborted with exit code 3: bad_input");
  ask(server, 1, "cmd=abort exitcode=1");
  EXPECT_EQ(server.failure()->rank, 3);  // the first one stays
}

}  // namespace
}  // namespace sched::pmi
