// The negotiation live in schedd (issue 20 items 3, 5): a rigid partition of
// whole nodes beside a cores partition scheduled by negotiation, both sides
// in schedd behind its socket. Jobs of the negotiated partition start
// through the negotiation and share a node by cores, each pinned to its
// agreed core (read back from /proc by the job); the rigid partition runs
// as before; nego.* events reach a subscriber; `sched negotiation` shows the
// statistics; a broken edit of a negotiation policy keeps the last good one;
// another batch system's iScheduler (the Python client written from the
// spec) can take the iScheduler's place at schedd's endpoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kLong = 60s;  // generous: the machine may be loaded

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool wait_line(const fs::path& path) {
  return eventually(
      [&] {
        const std::string text = slurp(path);
        return !text.empty() && text.back() == '\n';
      },
      kLong);
}

// What a subscriber of schedd's event socket sees: every event's topic and
// raw fields (nego.* events carry txn and attempt beyond EventMsg's).
class Subscriber {
 public:
  explicit Subscriber(const std::string& endpoint) : socket_(context_, zmq::socket_type::sub) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::subscribe, "");
    socket_.connect(endpoint);
  }
  // Reads events for up to `wait`, until `done` holds of what was seen.
  bool until(const std::function<bool(const std::vector<nlohmann::json>&)>& done,
             std::chrono::milliseconds wait = kLong) {
    const auto end = std::chrono::steady_clock::now() + wait;
    while (!done(seen_)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::min(left, std::chrono::milliseconds(200))) == 0) continue;
      zmq::message_t topic;
      zmq::message_t body;
      if (!socket_.recv(topic) || !socket_.recv(body)) continue;
      const auto handle = msgpack::unpack(static_cast<const char*>(body.data()), body.size());
      std::stringstream text;
      text << handle.get();  // msgpack's JSON-like print
      seen_.push_back(nlohmann::json::parse(text.str(), nullptr, false));
    }
    return true;
  }
  const std::vector<nlohmann::json>& seen() const { return seen_; }
  std::string dump() const {
    std::string out;
    for (const auto& e : seen_) out += e.dump() + "\n";
    return out;
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::vector<nlohmann::json> seen_;
};

std::function<bool(const std::vector<nlohmann::json>&)> has(const std::string& topic,
                                                            const std::string& code = {}) {
  return [topic, code](const std::vector<nlohmann::json>& seen) {
    for (const auto& e : seen) {
      if (e.is_object() && e.value("topic", "") == topic &&
          (code.empty() || e.value("code", "") == code)) {
        return true;
      }
    }
    return false;
  };
}

class NegotiatedPartition : public ::testing::Test {
 protected:
  void start(const std::string& scheduler = "internal") {
    // The policies are copies, so a test may break one.
    fs::copy_file(SCHED_SOURCE_POLICY_DIR "/negotiation/socket_pack.lua",
                  policies_.path() / "socket_pack.lua");
    fs::copy_file(SCHED_SOURCE_POLICY_DIR "/negotiation/wait_first.lua",
                  policies_.path() / "wait_first.lua");
    ClusterOptions options;
    options.policy = "fcfs";
    options.extra_config = R"(
[partitions.rigid]
nodes = "n1"
default = true

[partitions.inv]
nodes = "c1"
kind = "cores"

[partitions.inv.negotiation]
hypervisor_policy = ")" + (policies_.path() / "socket_pack.lua").string() +
                           R"("
scheduler_policy = ")" + (policies_.path() / "wait_first.lua").string() +
                           R"("
scheduler = ")" + scheduler +
                           R"("
status_interval_s = 1
)";
    cluster_ = std::make_unique<LocalCluster>(options);
    events_ = std::make_unique<Subscriber>(cluster_->event_endpoint());
    cluster_->start_agent("n1");
    cluster_->start_agent("c1", 2);  // 2 cores: this host's cores 0 and 1
    ASSERT_TRUE(cluster_->wait_nodes_up(2)) << cluster_->logs();
    work_ = cluster_->work_dir();
  }

  std::int64_t submitted(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit",       "--parsable", "-D",
                                    work_.string(), "-o",         "out-%j.txt"};
    all.insert(all.end(), args.begin(), args.end());
    const CliRun run = run_sched(*cluster_, all);
    EXPECT_EQ(run.status, 0) << describe(run);
    std::int64_t id = 0;
    std::istringstream(run.out) >> id;
    return id;
  }
  // A job of the negotiated partition that writes its CPUs to TAG.cpus and
  // waits for the file `release`.
  std::int64_t pinned_job(const std::string& tag, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"-p", "inv", "--cores=1"};
    args.insert(args.end(), more.begin(), more.end());
    args.insert(args.end(), {"--wrap", "grep Cpus_allowed_list /proc/self/status > " + tag +
                                           ".cpus; while [ ! -e release ]; do sleep 0.1; done"});
    return submitted(args);
  }
  nlohmann::json negotiation() {
    const CliRun run = run_sched(*cluster_, {"negotiation", "--json", "-p", "inv"});
    EXPECT_EQ(run.status, 0) << describe(run);
    const auto out = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_TRUE(out.is_object() && out["partitions"].size() == 1) << run.out;
    return out.is_object() && !out["partitions"].empty() ? out["partitions"][0] : nlohmann::json{};
  }

  TempDir policies_{"nego_policies_"};
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<Subscriber> events_;
  fs::path work_;
};

TEST_F(NegotiatedPartition, JobsStartThroughTheNegotiationSharingANodeByCores) {
  start();
  // The session is up once a STATUS_REPORT goes out (and the subscription holds).
  ASSERT_TRUE(events_->until(has("nego.status"))) << events_->dump() << cluster_->logs();

  const std::int64_t a = pinned_job("a");
  const std::int64_t b = pinned_job("b");
  ASSERT_TRUE(cluster_->wait_state(a, "RUNNING", kLong)) << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(b, "RUNNING", kLong)) << cluster_->logs();
  const std::int64_t r = submitted({"-N", "1", "--wrap", "true"});
  EXPECT_TRUE(cluster_->wait_state(r, "COMPLETED", kLong)) << "the rigid partition runs on\n"
                                                           << cluster_->logs();

  // Both on c1, each on its own core, pinned to it.
  const auto a_info = cluster_->job(a);
  const auto b_info = cluster_->job(b);
  EXPECT_EQ(a_info.nodelist, std::vector<std::string>{"c1"});
  EXPECT_EQ(b_info.nodelist, std::vector<std::string>{"c1"});
  ASSERT_TRUE(a_info.core_ids && b_info.core_ids);
  const std::vector<int> a_cores = a_info.core_ids->at("c1");
  const std::vector<int> b_cores = b_info.core_ids->at("c1");
  ASSERT_EQ(a_cores.size(), 1u);
  ASSERT_EQ(b_cores.size(), 1u);
  EXPECT_NE(a_cores[0], b_cores[0]);
  ASSERT_TRUE(wait_line(work_ / "a.cpus")) << cluster_->logs();
  ASSERT_TRUE(wait_line(work_ / "b.cpus")) << cluster_->logs();
  EXPECT_EQ(slurp(work_ / "a.cpus"), "Cpus_allowed_list:\t" + std::to_string(a_cores[0]) + "\n");
  EXPECT_EQ(slurp(work_ / "b.cpus"), "Cpus_allowed_list:\t" + std::to_string(b_cores[0]) + "\n");

  // They started through the negotiation: its steps were published, each
  // with the partition and its transaction, and the agreed mappings name
  // the jobs on the cores they got.
  ASSERT_TRUE(events_->until([&](const std::vector<nlohmann::json>& seen) {
    int agreed = 0;
    for (const auto& e : seen) agreed += e.is_object() && e.value("topic", "") == "nego.agreed";
    return agreed >= 1 && has("nego.offer")(seen) && has("nego.mapping")(seen) &&
           has("nego.accepted")(seen);
  })) << events_->dump();
  std::string agreed_jobs;
  for (const auto& e : events_->seen()) {
    if (!e.is_object() || e.value("topic", "").rfind("nego.", 0) != 0) continue;
    EXPECT_EQ(e.value("partition", ""), "inv") << e.dump();
    EXPECT_EQ(e.value("seq", -1), 0) << "not in the journal's sequence: " << e.dump();
    const std::string topic = e.value("topic", "");
    if (topic == "nego.offer" || topic == "nego.mapping" || topic == "nego.agreed") {
      EXPECT_GT(e.value("txn", 0), 0) << e.dump();
    }
    if (topic == "nego.agreed") agreed_jobs += e.value("message", "") + "\n";
  }
  EXPECT_NE(agreed_jobs.find("job " + std::to_string(a) + " on c1:" + std::to_string(a_cores[0])),
            std::string::npos)
      << agreed_jobs;

  // A third does not fit: it waits; `sched negotiation` shows the session.
  const std::int64_t c = pinned_job("c");
  const auto info = negotiation();
  EXPECT_EQ(info.value("peer", ""), "ready") << info.dump();
  EXPECT_EQ(info.value("scheduler", ""), "internal");
  EXPECT_EQ(info.value("hypervisor_policy", ""), "socket_pack");
  EXPECT_EQ(info.value("scheduler_policy", ""), "wait_first");
  EXPECT_GE(info.value("agreed", 0), 1) << info.dump();
  EXPECT_GE(info.value("mean_rounds", 0.0), 1.0) << info.dump();
  EXPECT_EQ(info.value("cores_total", 0), 2) << info.dump();
  EXPECT_EQ(info.value("start_refusals", -1), 0) << info.dump();
  EXPECT_GE(info["messages"].value("nego.offer", 0), 1) << info.dump();
  EXPECT_TRUE(info.contains("last_status")) << info.dump();
  EXPECT_EQ(cluster_->job(c).state, "PENDING");
  const CliRun text = run_sched(*cluster_, {"negotiation"});
  EXPECT_EQ(text.status, 0) << describe(text);
  EXPECT_NE(text.out.find("Partition=inv Scheduler=internal"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Peer=ready"), std::string::npos) << text.out;
  const CliRun parts = run_sched(*cluster_, {"partition"});
  EXPECT_NE(parts.out.find("negotiation(socket_pack/wait_first)"), std::string::npos) << parts.out;

  // Released: a and b end, c is negotiated onto a freed core.
  std::ofstream(work_ / "release") << "go\n";
  for (std::int64_t id : {a, b, c}) {
    EXPECT_TRUE(cluster_->wait_state(id, "COMPLETED", kLong)) << id << "\n" << cluster_->logs();
  }
  EXPECT_EQ(cluster_->job(c).nodelist, std::vector<std::string>{"c1"});
}

TEST_F(NegotiatedPartition, AnUrgentJobStartsAndABrokenPolicyEditKeepsTheLastGood) {
  start();
  ASSERT_TRUE(events_->until(has("nego.status"))) << events_->dump() << cluster_->logs();
  // URGENT_JOB: started at once on a free core.
  const std::int64_t u = submitted({"-p", "inv", "--cores=1", "--urgent", "--wrap", "true"});
  EXPECT_TRUE(cluster_->wait_state(u, "COMPLETED", kLong)) << cluster_->logs();
  EXPECT_TRUE(events_->until(has("nego.urgent", "started"))) << events_->dump();

  // A broken edit of the iHypervisor's policy: refused, reported, the last
  // good version runs on and so does schedd.
  { std::ofstream(policies_.path() / "socket_pack.lua.new") << "this is not Lua (\n"; }
  fs::rename(policies_.path() / "socket_pack.lua.new", policies_.path() / "socket_pack.lua");
  ASSERT_TRUE(events_->until([](const std::vector<nlohmann::json>& seen) {
    for (const auto& e : seen) {
      if (e.is_object() && e.value("topic", "") == "policy.error" &&
          e.value("partition", "") == "inv") {
        return true;
      }
    }
    return false;
  })) << events_->dump();
  const std::int64_t j = submitted({"-p", "inv", "--cores=2", "--wrap", "true"});
  EXPECT_TRUE(cluster_->wait_state(j, "COMPLETED", kLong)) << cluster_->logs();
  const auto info = negotiation();
  EXPECT_EQ(info.value("hypervisor_policy", ""), "socket_pack") << info.dump();
  EXPECT_GE(info.value("agreed", 0), 1) << info.dump();
}

// URGENT_JOB on a full node: the iHypervisor suspends the running job, the
// partition's pass suspends it and starts the urgent job on the cores it
// freed; once the urgent job ends the suspended one resumes on its own
// cores (read back from /proc by its script after the resumption) and ends.
TEST_F(NegotiatedPartition, AnUrgentJobSuspendsAJobThatResumesOnItsCoresAfterward) {
  start();
  ASSERT_TRUE(events_->until(has("nego.status"))) << events_->dump() << cluster_->logs();
  const std::int64_t a = submitted(
      {"-p", "inv", "--cores=2", "--wrap",
       "while [ ! -e go_a ]; do sleep 0.1; done; grep Cpus_allowed_list /proc/self/status > "
       "a.cpus"});
  ASSERT_TRUE(cluster_->wait_state(a, "RUNNING", kLong)) << cluster_->logs();
  const std::vector<int> a_cores = cluster_->job(a).core_ids.value().at("c1");
  ASSERT_EQ(a_cores.size(), 2u);

  const std::int64_t u = submitted({"-p", "inv", "--cores=1", "--urgent", "--wrap",
                                    "grep Cpus_allowed_list /proc/self/status > u.cpus; "
                                    "while [ ! -e go_u ]; do sleep 0.1; done"});
  ASSERT_TRUE(cluster_->wait_state(u, "RUNNING", kLong)) << cluster_->logs();
  EXPECT_TRUE(cluster_->wait_state(a, "SUSPENDED", kLong)) << cluster_->logs();
  EXPECT_TRUE(events_->until(has("nego.urgent", "started"))) << events_->dump();
  const auto u_info = cluster_->job(u);
  ASSERT_TRUE(u_info.core_ids);
  ASSERT_EQ(u_info.core_ids->at("c1").size(), 1u);
  const int u_core = u_info.core_ids->at("c1")[0];
  EXPECT_NE(std::find(a_cores.begin(), a_cores.end(), u_core), a_cores.end())
      << "the urgent job runs on a core the suspended job gave up";
  ASSERT_TRUE(wait_line(work_ / "u.cpus")) << cluster_->logs();
  EXPECT_EQ(slurp(work_ / "u.cpus"), "Cpus_allowed_list:\t" + std::to_string(u_core) + "\n");

  // The urgent job ends: a resumes on the very cores it had, and ends.
  std::ofstream(work_ / "go_u") << "go\n";
  ASSERT_TRUE(cluster_->wait_state(u, "COMPLETED", kLong)) << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(a, "RUNNING", kLong)) << cluster_->logs();
  EXPECT_EQ(cluster_->job(a).core_ids.value().at("c1"), a_cores);
  std::ofstream(work_ / "go_a") << "go\n";
  ASSERT_TRUE(cluster_->wait_state(a, "COMPLETED", kLong)) << cluster_->logs();
  ASSERT_TRUE(wait_line(work_ / "a.cpus"));
  EXPECT_EQ(slurp(work_ / "a.cpus"), "Cpus_allowed_list:\t" + std::to_string(a_cores.front()) +
                                         "-" + std::to_string(a_cores.back()) + "\n");
}

TEST_F(NegotiatedPartition, AfterARestartTheModelIsRebuiltFromTheJournal) {
  start();
  const std::int64_t a = pinned_job("a");
  ASSERT_TRUE(cluster_->wait_state(a, "RUNNING", kLong)) << cluster_->logs();
  const int a_core = cluster_->job(a).core_ids->at("c1").at(0);
  cluster_->kill_schedd(SIGKILL);
  cluster_->start_schedd();
  // a runs on (its agent owns up to it); a new job is negotiated onto the
  // other core only: the iHypervisor's model has a's core busy.
  ASSERT_TRUE(cluster_->wait_state(a, "RUNNING", kLong)) << cluster_->logs();
  const std::int64_t b = pinned_job("b");
  ASSERT_TRUE(cluster_->wait_state(b, "RUNNING", kLong)) << cluster_->logs();
  const auto b_info = cluster_->job(b);
  ASSERT_TRUE(b_info.core_ids);
  EXPECT_EQ(b_info.core_ids->at("c1"), std::vector<int>{1 - a_core});
  const auto info = negotiation();
  EXPECT_EQ(info.value("cores_busy", 0), 2) << info.dump();
  EXPECT_EQ(info.value("start_refusals", -1), 0) << info.dump();
  std::ofstream(work_ / "release") << "go\n";
  EXPECT_TRUE(cluster_->wait_state(a, "COMPLETED", kLong)) << cluster_->logs();
  EXPECT_TRUE(cluster_->wait_state(b, "COMPLETED", kLong)) << cluster_->logs();
}

TEST_F(NegotiatedPartition, AnotherBatchSystemsISchedulerNegotiatesWithSchedd) {
  start("external");
  const auto info = negotiation();
  const std::string endpoint = info.value("endpoint", "");
  ASSERT_FALSE(endpoint.empty()) << info.dump();
  EXPECT_EQ(info.value("scheduler", ""), "external");
  const std::int64_t job = pinned_job("x");
  // No iScheduler of schedd's: the job waits for the external one.
  EXPECT_EQ(cluster_->job(job).state, "PENDING");

  Process client({"/usr/bin/python3",
                  SCHED_TEST_DATA_DIR "/../negotiation/client/schedd_scheduler.py", endpoint,
                  std::to_string(job), "1"});
  std::string mapping;
  while (auto line = client.read_line(kLong)) mapping += *line;
  const auto status = client.wait(kLong);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << mapping << "\n"
                                                                         << cluster_->logs();
  const auto agreed = nlohmann::json::parse(mapping, nullptr, false);
  ASSERT_TRUE(agreed.is_array() && agreed.size() == 1) << mapping;
  EXPECT_EQ(agreed[0].value("job", 0), job);
  ASSERT_TRUE(cluster_->wait_state(job, "RUNNING", kLong)) << cluster_->logs();
  const auto got = cluster_->job(job);
  ASSERT_TRUE(got.core_ids);
  EXPECT_EQ(got.core_ids->at("c1"), agreed[0]["cores"].get<std::vector<int>>());
  ASSERT_TRUE(wait_line(work_ / "x.cpus")) << cluster_->logs();
  EXPECT_EQ(slurp(work_ / "x.cpus"),
            "Cpus_allowed_list:\t" + std::to_string(got.core_ids->at("c1")[0]) + "\n");
  std::ofstream(work_ / "release") << "go\n";
  EXPECT_TRUE(cluster_->wait_state(job, "COMPLETED", kLong)) << cluster_->logs();

  // Another iScheduler (a new connection) takes over: the first one's
  // session ends (nego.peer_gone) and the newcomer's agreement starts a job.
  const std::int64_t next = submitted({"-p", "inv", "--cores=1", "--wrap", "true"});
  Process second({"/usr/bin/python3",
                  SCHED_TEST_DATA_DIR "/../negotiation/client/schedd_scheduler.py", endpoint,
                  std::to_string(next), "1"});
  std::string out;
  while (auto line = second.read_line(kLong)) out += *line;
  const auto done = second.wait(kLong);
  ASSERT_TRUE(done && WIFEXITED(*done) && WEXITSTATUS(*done) == 0) << out << "\n"
                                                                   << cluster_->logs();
  EXPECT_TRUE(cluster_->wait_state(next, "COMPLETED", kLong)) << cluster_->logs();
  EXPECT_TRUE(events_->until(has("nego.peer_gone"))) << events_->dump();
}

}  // namespace
}  // namespace sched::testing
