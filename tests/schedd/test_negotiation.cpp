// The negotiation glue of schedd (issue 20 items 3, 5; schedd/negotiation.hpp)
// over a real engine and real sockets (inproc): a job of the negotiated
// partition starts on the cores the two Lua policies agreed, through the
// engine's checked start; every step is an event with its transaction; an
// agreed start the engine refuses is reported and starts nothing; the
// model follows the engine when jobs end; and the config's table is read
// and checked.
#include <gtest/gtest.h>

#include <chrono>
#include <zmq.hpp>

#include "daemon_config.hpp"
#include "engine_fixture.hpp"
#include "lua_test_support.hpp"
#include "negotiation.hpp"
#include "negotiation_events.hpp"
#include "sched/proto/envelope.hpp"
#include "test_paths.hpp"

namespace sched::daemon {
namespace {

using test::EngineFixture;

PartitionSpec partition(std::string name, std::vector<std::string> nodes, PartitionKind kind,
                        bool is_default = false) {
  PartitionSpec spec;
  spec.name = std::move(name);
  spec.nodes = std::move(nodes);
  spec.kind = kind;
  spec.is_default = is_default;
  return spec;
}

class NegotiationGlue : public EngineFixture {
 protected:
  // n0: "batch"; n2, n3: "inv" (cores), 8 cores in 2 sockets each.
  void SetUp() override {
    engine = std::make_unique<Engine>(clock, enactor);
    engine->add_sink(&events);
    policy = std::make_shared<test::ScriptedPolicy>();
    engine->set_policy(policy);
    engine->add_node("n0", 8);
    engine->add_node("n2", 8);
    engine->add_node("n3", 8);
    ASSERT_TRUE(engine
                    ->set_partitions({partition("batch", {"n0"}, PartitionKind::Nodes, true),
                                      partition("inv", {"n2", "n3"}, PartitionKind::Cores)})
                    .ok());
    ASSERT_TRUE(engine->set_node_sockets("n2", 2).ok());
    ASSERT_TRUE(engine->set_node_sockets("n3", 2).ok());
    Negotiation::Setup setup;
    setup.partition = "inv";
    setup.hypervisor_path = SCHED_SOURCE_POLICY_DIR "/negotiation/socket_pack.lua";
    setup.scheduler_path = SCHED_SOURCE_POLICY_DIR "/negotiation/wait_first.lua";
    setup.endpoint = "inproc://negotiation-glue";
    Negotiation::Sinks sinks;
    sinks.event = [this](const std::string& p, const NegoEvent& e) {
      EXPECT_EQ(p, "inv");
      nego.push_back(e);
    };
    glue = std::make_unique<Negotiation>(context, *engine, setup, sinks);
    ASSERT_TRUE(engine->set_partition_policy("inv", glue->policy()).ok());
    engine->run_pass_if_due();
  }

  // Turns of the daemon's loop until `done` or 400 turns (the sockets are
  // inproc: a message is there once sent).
  bool turn_until(const std::function<bool()>& done) {
    for (int i = 0; i < 400 && !done(); ++i) {
      glue->turn(clock.now());
      engine->run_pass_if_due();
      glue->turn(clock.now());
      std::vector<zmq::pollitem_t> items;
      glue->add_poll_items(items);
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(5));
    }
    return done();
  }
  bool seen(const std::string& topic) const {
    for (const auto& e : nego) {
      if (e.topic == topic) return true;
    }
    return false;
  }
  JobSpec cores_job(int cores) {
    JobSpec spec;
    spec.name = "c";
    spec.user = "alice";
    spec.layout.edit().cores = cores;
    spec.partition = "inv";
    return spec;
  }

  zmq::context_t context{1};
  std::unique_ptr<Negotiation> glue;
  std::vector<NegoEvent> nego;
};

TEST_F(NegotiationGlue, AJobStartsOnTheAgreedCoresThroughTheEngine) {
  const JobId id = submit(cores_job(3));
  ASSERT_TRUE(turn_until([&] { return state(id) == JobState::Starting; }))
      << "state " << to_string(state(id));
  // Packed on one socket of one node (socket_pack's metric), as the engine holds them.
  const Job& j = job(id);
  ASSERT_EQ(j.run->cores.size(), 1u);
  const std::vector<int> cores = j.run->cores[0].cores;
  ASSERT_EQ(cores.size(), 3u);
  EXPECT_EQ(cores[0] / 4, cores[2] / 4) << "one socket";
  EXPECT_EQ(enactor.count(Kind::Start, id), 1);
  for (const char* topic : {"nego.offer", "nego.mapping", "nego.accepted", "nego.agreed"}) {
    EXPECT_TRUE(seen(topic)) << topic;
  }
  for (const auto& e : nego) {
    if (e.topic == "nego.offer" || e.topic == "nego.agreed") {
      EXPECT_GT(e.txn, 0) << e.topic;
    }
    if (e.topic == "nego.agreed") {
      EXPECT_NE(e.message.find("job " + std::to_string(id)), std::string::npos);
    }
  }
  const proto::NegotiationInfo info = glue->info();
  EXPECT_EQ(info.peer, "ready");
  EXPECT_EQ(info.agreed, 1);
  EXPECT_EQ(info.cores_total, 16);
  EXPECT_EQ(info.cores_busy, 3);
  EXPECT_EQ(info.start_refusals, 0);
  EXPECT_GT(info.messages.at("nego.offer"), 0);

  // It ends: the model frees its cores.
  engine->job_started(id);
  engine->job_ended(id, 0);
  ASSERT_TRUE(turn_until([&] { return glue->info().cores_busy == 0; }));
}

TEST_F(NegotiationGlue, AnAgreedStartTheEngineRefusesStartsNothing) {
  const JobId a = submit(cores_job(2));
  ASSERT_TRUE(turn_until([&] { return state(a) == JobState::Starting; }));
  // An agreement naming a job that already runs (as a confused external
  // iScheduler could make): the engine refuses, nothing starts twice.
  glue->policy()->add_start({a, {NodeCores{*engine->cluster().find("n3"), {0, 1}}}});
  engine->request_pass(PassReason::Manual);
  engine->run_pass_if_due();
  glue->turn(clock.now());
  EXPECT_EQ(enactor.count(Kind::Start, a), 1);
  EXPECT_TRUE(seen("nego.refused"));
  EXPECT_EQ(glue->info().start_refusals, 1);
  // The model still has a's cores busy: it follows the engine, not the refusal.
  EXPECT_EQ(glue->info().cores_busy, 2);
}

TEST_F(NegotiationGlue, TheModelFollowsADrainAndACancelledJobLeavesTheQueue) {
  ASSERT_TRUE(turn_until([&] { return glue->info().peer == "ready"; }));
  EXPECT_EQ(glue->info().cores_total, 16);
  // A drained node leaves the offers.
  ASSERT_TRUE(engine->set_node_draining("n3", true, "maintenance").ok());
  ASSERT_TRUE(turn_until([&] { return glue->info().cores_total == 8; }));
  const JobId a = submit(cores_job(8));
  ASSERT_TRUE(turn_until([&] { return state(a) == JobState::Starting; }));
  EXPECT_EQ(job(a).run->cores.at(0).node, *engine->cluster().find("n2"));
  // No room: the next job waits in the iScheduler's queue until cancelled.
  const JobId b = submit(cores_job(4));
  ASSERT_TRUE(turn_until([&] { return glue->info().queued == 1; }));
  ASSERT_TRUE(engine->cancel(b).ok());
  ASSERT_TRUE(turn_until([&] { return glue->info().queued == 0; }));
  // The drain lifted: b is gone, nothing else starts.
  ASSERT_TRUE(engine->set_node_draining("n3", false).ok());
  ASSERT_TRUE(turn_until([&] { return glue->info().cores_total == 16; }));
  EXPECT_EQ(enactor.count(Kind::Start), 1);
  EXPECT_EQ(state(b), JobState::Cancelled);
}

TEST(NegotiationConfig, TheTableIsReadAndChecked) {
  luatest::TempDir dir;
  const DaemonConfig c = load_config(dir.write("ok.toml", R"(
[partitions.inv]
nodes = "s[1-2]"
kind = "cores"
[partitions.inv.negotiation]
hypervisor_policy = "h.lua"
endpoint = "tcp://127.0.0.1:0"
scheduler = "external"
max_attempts = 5
timeout_s = 2.5
status_interval_s = 0
[partitions.plain]
nodes = "p1"
kind = "cores"
)"));
  ASSERT_EQ(c.partitions.size(), 2u);
  ASSERT_TRUE(c.partitions[0].negotiation);
  const auto& n = *c.partitions[0].negotiation;
  EXPECT_EQ(n.hypervisor_policy, "h.lua");
  EXPECT_EQ(n.scheduler_policy, "negotiation/wait_first");
  EXPECT_EQ(n.endpoint, "tcp://127.0.0.1:0");
  EXPECT_EQ(n.scheduler, "external");
  EXPECT_EQ(n.max_attempts, 5);
  EXPECT_EQ(n.timeout_s, 2.5);
  EXPECT_EQ(n.status_interval_s, 0);
  EXPECT_FALSE(c.partitions[1].negotiation);

  const auto error = [&](const std::string& text) {
    try {
      load_config(dir.write("bad.toml", text));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("[partitions.a]\nnodes = \"x\"\n[partitions.a.negotiation]\n")
                .find("only a partition of kind = \"cores\" is negotiated"),
            std::string::npos);
  EXPECT_NE(error("[partitions.a]\nnodes = \"x\"\nkind = \"cores\"\npolicy = \"fcfs\"\n"
                  "[partitions.a.negotiation]\n")
                .find("not by a policy"),
            std::string::npos);
  EXPECT_NE(error("[partitions.a]\nnodes = \"x\"\nkind = \"cores\"\n[partitions.a.negotiation]\n"
                  "scheduler = \"both\"\n")
                .find("expected \"internal\" or \"external\""),
            std::string::npos);
  EXPECT_NE(error("[partitions.a]\nnodes = \"x\"\nkind = \"cores\"\n[partitions.a.negotiation]\n"
                  "max_attempts = 0\n")
                .find("must be at least 1"),
            std::string::npos);
  EXPECT_NE(error("[partitions.a]\nnodes = \"x\"\nkind = \"cores\"\n[partitions.a.negotiation]\n"
                  "color = 1\n")
                .find("partitions.a.negotiation.color: unknown key"),
            std::string::npos);
}

TEST(NegoWatch, ARejectedMappingAndAnUrgentAnswerAreEvents) {
  NegoWatch watch;
  proto::NegoOffer offer;
  offer.txn = 4;
  offer.attempt = 2;
  offer.reason = "mapping_rejected: splits job 9 over 2 sockets";
  offer.offer.resources.push_back({"n2", {{0, {0, 1}}}});
  const auto events = watch.seen(proto::encode_request(proto::type::kNegoOffer, 1, offer), true);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].topic, "nego.rejected");
  EXPECT_EQ(events[0].code, "hypervisor");
  EXPECT_EQ(events[0].reason, "splits job 9 over 2 sockets");
  EXPECT_EQ(events[0].attempt, 1);
  EXPECT_EQ(events[1].topic, "nego.offer");
  EXPECT_EQ(events[1].txn, 4);
  EXPECT_EQ(events[1].message, "2 cores on 1 node(s)");

  proto::NegoUrgentResponse urgent;
  urgent.job = 12;
  urgent.reason = "not enough free cores on any node (no suspending here)";
  const auto refused =
      watch.seen(proto::encode_request(proto::type::kNegoUrgentResponse, 2, urgent), true);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].topic, "nego.urgent");
  EXPECT_EQ(refused[0].code, "refused");
  EXPECT_EQ(refused[0].job, 12);
  EXPECT_TRUE(watch.seen("not msgpack", false).empty());
}

}  // namespace
}  // namespace sched::daemon
