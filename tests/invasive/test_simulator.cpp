// The negotiation simulator on workloads small enough to work out by hand
// (the reasoning is beside each expectation).
#include <gtest/gtest.h>
#include <unistd.h>

#include "policy_files.hpp"
#include "sched/invasive/simulator.hpp"

namespace sched::invasive {
namespace {

using testing::bundled;
using testing::TempPolicies;

// One node with two sockets of four cores (0-3, 4-7); three jobs at t = 0.
std::vector<WorkloadJob> three_jobs() {
  return {{1, 3, 0, 10, false}, {2, 3, 0, 10, false}, {3, 2, 0, 5, false}};
}

SimConfig config(bool negotiate, int attempts = 3) {
  SimConfig c;
  c.topology = Topology::uniform(1, 2, 4);
  c.hypervisor_policy = negotiate ? bundled("socket_pack.lua") : "";
  c.scheduler_policy = bundled("wait_first.lua");
  c.params = {attempts, 60, 0};
  return c;
}

TEST(NegotiationSim, WithoutNegotiationTheSchedulersMappingStands) {
  SimResult r = simulate(three_jobs(), config(false));
  // wait_first maps in order onto cores 0-7: job 1 on 0,1,2, job 2 on 3,4,5
  // (split over both sockets), job 3 on 6,7; all start at 0.
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 0);
  EXPECT_EQ(r.jobs[1].extra_sockets, 1);
  EXPECT_EQ(r.jobs[2].end, 5);
  EXPECT_DOUBLE_EQ(r.mean_wait_s, 0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 10);
  EXPECT_DOUBLE_EQ(r.utilisation, 70.0 / 80.0);
  EXPECT_DOUBLE_EQ(r.split_fraction, 1.0 / 3.0);
  EXPECT_EQ(r.hypervisor.rounds, (std::vector<int>{1}));
  // t=0: init + response, request, offer, start + response, answer, end +
  // response (9); t=5: job 3 ends, an offer the empty queue declines, its
  // end's response (3).
  EXPECT_EQ(r.messages.total, 12);
  EXPECT_EQ(r.messages.by_type["nego.offer"], 2);
  EXPECT_EQ(r.scheduler.declined, 1);
  EXPECT_EQ(r.unfinished, 0);
}

TEST(NegotiationSim, SocketPackingMakesJob3WaitAndPacksEveryJob) {
  SimResult r = simulate(three_jobs(), config(true));
  // txn 1: the mapping above is rejected (job 2 split); offer 2 holds core 3
  // back, and job 1 on 0,1,2, job 2 on 4,5,6 are agreed (2 rounds).
  // txn 2: cores 3 and 7 are free; job 3 on 3,7 is rejected; offer 2 holds
  // core 3 back: {7} fits nothing, the iScheduler rejects it; offer 3 is
  // the last: the empty mapping is agreed. At t=10 jobs 1 and 2 end; txn 3
  // gives job 3 cores 0,1 at once.
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 10);
  EXPECT_EQ(r.jobs[2].end, 15);
  for (const auto& j : r.jobs) EXPECT_EQ(j.extra_sockets, 0) << "job " << j.id;
  EXPECT_DOUBLE_EQ(r.mean_wait_s, 10.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 15);
  EXPECT_DOUBLE_EQ(r.split_fraction, 0);
  EXPECT_EQ(r.hypervisor.rounds, (std::vector<int>{2, 1}));
  EXPECT_EQ(r.hypervisor.agreed, 2);
  EXPECT_EQ(r.hypervisor.agreed_empty, 1);
  EXPECT_EQ(r.hypervisor.rejected_mappings, 2);
  EXPECT_EQ(r.hypervisor.forced_at_limit, 0);  // the empty mapping is not against it
  EXPECT_EQ(r.scheduler.rejected_offers, 1);
  // init 2, request 1, txn 1: 8, txn 2: 10, txn 3: 6, at t=15 a declined
  // offer: 3.
  EXPECT_EQ(r.messages.total, 30);
  EXPECT_EQ(r.hypervisor.refusals, 0);
  EXPECT_EQ(r.hypervisor.policy_errors, 0);
}

TEST(NegotiationSim, AtTheAttemptLimitBothSidesTakeTheLastMapping) {
  TempPolicies dir;
  SimConfig c = config(true, 2);
  c.hypervisor_policy = dir.write("never.lua", R"(return {
    make_offer = function(view)
      local resources = {}
      for _, n in ipairs(view.nodes) do
        local sockets = {}
        for _, s in ipairs(n.sockets) do
          if #s.free > 0 then sockets[#sockets + 1] = {socket = s.socket, cores = s.free} end
        end
        if #sockets > 0 then resources[#resources + 1] = {node = n.name, sockets = sockets} end
      end
      return {resources = resources}
    end,
    judge = function() return false, "never" end })");
  SimResult r = simulate(three_jobs(), c);
  // Offer 1's mapping is rejected; offer 2 is the last: the same mapping is
  // agreed, and the jobs start where the iScheduler put them.
  EXPECT_EQ(r.hypervisor.rounds, (std::vector<int>{2}));
  EXPECT_EQ(r.hypervisor.forced_at_limit, 1);
  EXPECT_EQ(r.hypervisor.rejected_mappings, 1);
  for (const auto& j : r.jobs) EXPECT_EQ(j.start, 0) << "job " << j.id;
  EXPECT_EQ(r.jobs[1].extra_sockets, 1);
  EXPECT_EQ(r.unfinished, 0);
}

TEST(NegotiationSim, AnUrgentJobSuspendsARunningOneThatResumesAfter) {
  std::vector<WorkloadJob> jobs{{1, 8, 0, 100, false}, {2, 2, 10, 5, true}};
  SimResult r = simulate(jobs, config(true));
  // Job 1 holds all 8 cores; at t=10 the urgent job 2 suspends it, runs on
  // cores 0,1 until 15, and job 1 resumes then with 90 s left.
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_TRUE(r.jobs[0].suspended);
  EXPECT_EQ(r.jobs[0].end, 105);
  EXPECT_EQ(r.jobs[1].start, 10);
  EXPECT_EQ(r.jobs[1].end, 15);
  EXPECT_EQ(r.messages.by_type["nego.urgent"], 1);
  EXPECT_EQ(r.messages.by_type["nego.urgent_response"], 1);
}

TEST(NegotiationSim, ABrokenPolicyFileStopsTheRunWithItsError) {
  TempPolicies dir;
  SimConfig c = config(false);
  c.scheduler_policy = dir.write("bad.lua", "return {");
  try {
    simulate(three_jobs(), c);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.lua:1:"), std::string::npos) << e.what();
  }
}

TEST(NegotiationSim, GeneratedWorkloadsAreReproducible) {
  auto a = generate_workload(50, 7, 30, 8, 600);
  auto b = generate_workload(50, 7, 30, 8, 600);
  ASSERT_EQ(a.size(), 50u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].submit, b[i].submit);
    EXPECT_EQ(a[i].cores, b[i].cores);
    EXPECT_GE(a[i].cores, 1);
    EXPECT_LE(a[i].cores, 8);
  }
}

TEST(NegotiationSim, UrgentJobsOfAGeneratedWorkloadAllRunAndNoneTwice) {
  auto jobs = generate_workload(60, 3, 30, 8, 600, 10);
  int urgent = 0;
  for (const auto& j : jobs) urgent += j.urgent;
  ASSERT_EQ(urgent, 6);
  SimConfig c = config(true);
  c.topology = Topology::uniform(2, 2, 4);
  SimResult r = simulate(jobs, c);
  EXPECT_EQ(r.unfinished, 0);
  EXPECT_EQ(r.messages.by_type["nego.urgent"], 6);
  EXPECT_EQ(r.messages.by_type["nego.urgent_response"], 6);
  EXPECT_EQ(r.hypervisor.refusals, 0);
  for (const auto& j : r.jobs) {
    // Each job ran once, for at least its runtime (longer if suspended).
    const double runtime = jobs[static_cast<std::size_t>(j.id - 1)].runtime;
    EXPECT_GE(j.end - j.start, runtime) << "job " << j.id;
    if (!j.suspended) {
      EXPECT_EQ(j.end - j.start, runtime) << "job " << j.id;
    }
    if (j.urgent) {
      EXPECT_EQ(j.start, j.submit) << "urgent job " << j.id << " started at once";
    }
  }
}

}  // namespace
}  // namespace sched::invasive
