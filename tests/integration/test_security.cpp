// The links between schedd and its agents (docs/security.md §3): CURVE
// with a ZAP handler. An agent without a key, or with a key schedd does not
// know, cannot connect; a known key registers and speaks only as the nodes
// it is bound to; what it forges for another node is refused, published as
// auth.denied, and changes nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <msgpack.hpp>
#include <thread>

#include "cluster.hpp"
#include "munge_support.hpp"
#include "sched/auth/credential.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/curve.hpp"
#include "sched/proto/event_messages.hpp"
#include "test_paths.hpp"

using namespace sched;
using namespace sched::testing;

namespace {

// A process speaking the agent protocol by hand, with the key it is given
// (none: a plain ZeroMQ connection).
class Rogue {
 public:
  Rogue(const std::string& endpoint, const std::optional<proto::curve::KeyPair>& key,
        const std::string& server_key)
      : socket_(context_, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    if (key) proto::curve::make_client(socket_, *key, server_key);
    socket_.connect(endpoint);
  }
  // "ok", the error code of the reply, or "no reply" after `wait`.
  template <class Body>
  std::string ask(std::string_view type, const Body& body,
                  std::chrono::milliseconds wait = std::chrono::seconds(5)) {
    const std::string bytes = proto::encode_request(type, ++seq_, body);
    if (!socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return "no reply";
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      zmq::message_t reply;
      if (!socket_.recv(reply, zmq::recv_flags::dontwait)) continue;
      const auto envelope = proto::decode(reply.data(), reply.size());
      if (!envelope.is_reply() || envelope.seq != seq_) continue;  // a job.launch, ...
      return envelope.error ? envelope.error->code : std::string("ok");
    }
    return "no reply";
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::uint64_t seq_ = 0;
};

// schedd's auth.denied events, subscribed before the test acts.
class DeniedEvents {
 public:
  explicit DeniedEvents(const std::string& endpoint) : socket_(context_, zmq::socket_type::sub) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::subscribe, "auth.denied");
    socket_.connect(endpoint);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the subscription reaches schedd
  }
  // The next auth.denied event within `wait`.
  std::optional<proto::EventMsg> next(std::chrono::milliseconds wait = std::chrono::seconds(5)) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
    zmq::message_t topic;
    zmq::message_t body;
    if (!socket_.recv(topic) || !socket_.recv(body)) return std::nullopt;
    const auto handle = msgpack::unpack(static_cast<const char*>(body.data()), body.size());
    return proto::read_body<proto::EventMsg>(handle.get());
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
};

proto::AgentRegister registration(const std::string& node) {
  proto::AgentRegister reg;
  reg.node = node;
  reg.cores = 1;
  reg.clean = true;
  return reg;
}

std::vector<std::string> node_names(LocalCluster& cluster) {
  std::vector<std::string> names;
  for (const auto& node :
       cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{}).nodes) {
    names.push_back(node.name);
  }
  return names;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST(Security, AnAgentWithoutAKeyCannotConnect) {
  LocalCluster cluster;
  // A plain connection (no CURVE) to the agent socket: the handshake fails,
  // nothing it sends is read, nothing is answered.
  Rogue plain(cluster.agent_endpoint(), std::nullopt, "");
  EXPECT_EQ(plain.ask(proto::type::kAgentRegister, registration("n9"), std::chrono::seconds(2)),
            "no reply");
  EXPECT_FALSE(contains(node_names(cluster), "n9"));
  // A CURVE client that takes a wrong key for schedd's fails the same way.
  Rogue wrong_server(cluster.agent_endpoint(), cluster.agent_key("n1"),
                     proto::curve::generate().public_key);
  EXPECT_EQ(
      wrong_server.ask(proto::type::kAgentRegister, registration("n1"), std::chrono::seconds(2)),
      "no reply");
  EXPECT_TRUE(node_names(cluster).empty());
}

TEST(Security, AnUnknownKeyIsRefusedByTheZapHandler) {
  LocalCluster cluster;
  DeniedEvents denied(cluster.event_endpoint());
  const auto stranger = proto::curve::generate();
  Rogue rogue(cluster.agent_endpoint(), stranger, cluster.schedd_key().public_key);
  EXPECT_EQ(rogue.ask(proto::type::kAgentRegister, registration("n9"), std::chrono::seconds(2)),
            "no reply");
  const auto event = denied.next();
  ASSERT_TRUE(event) << cluster.logs();
  ASSERT_TRUE(event->message);
  EXPECT_NE(event->message->find(stranger.public_key), std::string::npos) << *event->message;
  EXPECT_NE(event->message->find("not in"), std::string::npos) << *event->message;
  EXPECT_FALSE(contains(node_names(cluster), "n9"));
  EXPECT_NE(cluster.logs().find("auth.denied"), std::string::npos);
}

TEST(Security, AKeyRegistersOnlyAsItsOwnNode) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  DeniedEvents denied(cluster.event_endpoint());
  // n1's key, stolen: it connects, but may not register as n2.
  Rogue rogue(cluster.agent_endpoint(), cluster.agent_key("n1"), cluster.schedd_key().public_key);
  EXPECT_EQ(rogue.ask(proto::type::kAgentRegister, registration("n2")), "permission_denied");
  const auto event = denied.next();
  ASSERT_TRUE(event) << cluster.logs();
  EXPECT_EQ(event->node.value_or(""), "n2");
  EXPECT_EQ(node_names(cluster), std::vector<std::string>{"n1"});
  // The real n1 is untouched.
  EXPECT_TRUE(cluster.wait_nodes_up(1));
}

TEST(Security, AForgedExitForAJobOnAnotherNodeIsRefusedAndChangesNothing) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const auto id = cluster.submit("#!/bin/sh\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  const std::string victim = cluster.job(id).nodelist.front();
  const std::string other = victim == "n1" ? "n2" : "n1";
  DeniedEvents denied(cluster.event_endpoint());

  // The other node's key claims the victim's node: refused, published.
  Rogue rogue(cluster.agent_endpoint(), cluster.agent_key(other), cluster.schedd_key().public_key);
  proto::TaskExited forged;
  forged.node = victim;
  forged.job = id;
  forged.status = 0;
  EXPECT_EQ(rogue.ask(proto::type::kTaskExited, forged), "permission_denied");
  const auto event = denied.next();
  ASSERT_TRUE(event) << cluster.logs();
  EXPECT_EQ(event->node.value_or(""), victim);
  ASSERT_TRUE(event->message);
  EXPECT_NE(event->message->find("task.exited"), std::string::npos) << *event->message;

  // Naming its own node for the victim's job: its node does not run the job,
  // so the report ends nothing.
  forged.node = other;
  EXPECT_NE(rogue.ask(proto::type::kTaskExited, forged), "permission_denied");

  // The job runs on; no accounting record says it ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto job = cluster.job(id);
  EXPECT_EQ(job.state, "RUNNING");
  EXPECT_EQ(job.nodelist.front(), victim);
  proto::AcctQuery acct;
  acct.ids = std::vector<std::int64_t>{id};
  EXPECT_TRUE(cluster.client().call<proto::JobList>(proto::type::kAcct, acct).jobs.empty());
}

TEST(Security, AKeyTakenOutOfTheFileIsRefusedFromThenOn) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  // The administrator revokes n1's key: its heartbeats are refused, and the
  // node goes down once it has been silent for down_after_s.
  std::ofstream(cluster.authorized_agents_file(), std::ios::trunc) << "# none\n";
  EXPECT_TRUE(eventually(
      [&] {
        const auto nodes =
            cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
        return nodes.nodes.size() == 1 && nodes.nodes[0].state == "down";
      },
      std::chrono::seconds(10)))
      << cluster.logs();
  EXPECT_NE(cluster.logs().find("no longer authorised"), std::string::npos);
}

namespace {

// Runs `sched ARGS...` to its end: its exit status (-1: no exit in time) and
// its output, stderr included.
std::pair<int, std::string> run_sched(const std::vector<std::string>& args) {
  TempDir dir("sched-cli");
  std::vector<std::string> argv = {SCHED_CLI_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  Process process(argv, dir.str() + "/stderr");
  std::string out;
  while (auto line = process.read_line(std::chrono::seconds(10))) out += *line + "\n";
  const auto status = process.wait(std::chrono::seconds(10));
  out += read_file(dir.str() + "/stderr");
  return {status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, out};
}

}  // namespace

TEST(Security, ClientLinksOffLoopbackAreEncrypted) {
  ClusterOptions options;
  options.bind_host = "0.0.0.0";  // off loopback: the client and event sockets are CURVE
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  // The cluster's client has schedd's public key.
  const auto stats = cluster.client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
  EXPECT_EQ(stats.event_endpoint.rfind("tcp://0.0.0.0:", 0), 0u) << stats.event_endpoint;

  // A plain client, and one that takes another key for schedd's, get no
  // answer: the socket speaks nothing but CURVE with schedd's own key.
  zmq::context_t context(1);
  proto::Client plain(context, cluster.client_endpoint(), std::chrono::seconds(2));
  EXPECT_THROW(plain.call<proto::StatsReply>(proto::type::kStats, proto::Empty{}),
               proto::TransportError);
  proto::Client impostor(context, cluster.client_endpoint(), std::chrono::seconds(2),
                         auth::munge_signer(TestMunged::socket()),
                         proto::curve::generate().public_key);
  EXPECT_THROW(impostor.call<proto::StatsReply>(proto::type::kStats, proto::Empty{}),
               proto::TransportError);

  // The CLI with schedd's key file: requests and events work.
  const std::string key_file = cluster.keys_dir() + "/schedd.pub";
  const auto [status, out] =
      run_sched({"--endpoint", cluster.client_endpoint(), "--server-key", key_file, "nodes"});
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("n1"), std::string::npos) << out;
  Process events({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "--server-key", key_file,
                  "events", "--count", "1", "--topic", "job."});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the subscription is in place
  const auto id = cluster.submit("#!/bin/sh\ntrue\n");
  const auto line = events.read_line(std::chrono::seconds(5));
  ASSERT_TRUE(line) << cluster.logs();
  EXPECT_NE(line->find("\"job\":" + std::to_string(id)), std::string::npos) << *line;

  // Off loopback without a key, the CLI says what it needs.
  const auto [refused, message] =
      run_sched({"--endpoint", "tcp://192.0.2.1:1", "--timeout", "1", "nodes"});
  EXPECT_EQ(refused, 1) << message;
  EXPECT_NE(message.find("--server-key"), std::string::npos) << message;
}

TEST(Security, KeysMadeWithTheCommandLetANodeRegister) {
  LocalCluster cluster;
  // An administrator's way: a key pair for node n7, then its line in
  // schedd's authorised-keys file; schedd picks it up without a restart.
  const auto [made, key] = run_sched({"keys", "new", "n7", "--out", cluster.keys_dir()});
  ASSERT_EQ(made, 0) << key;
  const std::string public_key = key.substr(0, key.find('\n'));
  EXPECT_TRUE(proto::curve::is_key(public_key)) << key;
  const auto [again, refusal] = run_sched({"keys", "new", "n7", "--out", cluster.keys_dir()});
  EXPECT_EQ(again, 1) << refusal;  // an existing pair is kept unless --force
  EXPECT_NE(refusal.find("--force"), std::string::npos) << refusal;

  const auto [authorized, said] = run_sched({"keys", "authorize", cluster.keys_dir() + "/n7.pub",
                                             "n[7-8]", "--file", cluster.authorized_agents_file()});
  ASSERT_EQ(authorized, 0) << said;
  const auto [twice, bound] = run_sched({"keys", "authorize", cluster.keys_dir() + "/n7.pub", "n9",
                                         "--file", cluster.authorized_agents_file()});
  EXPECT_EQ(twice, 1) << bound;  // listed already: --replace
  const auto [shown, shown_key] = run_sched({"keys", "show", cluster.keys_dir() + "/n7.key"});
  EXPECT_EQ(shown_key, public_key + "\n");

  cluster.start_agent("n7");  // with keys/n7.key, as made above
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  EXPECT_EQ(node_names(cluster), std::vector<std::string>{"n7"});
}

TEST(Security, AKeyFileWhosePathLooksLikeAKeyIsReadAsAFile) {
  // 40 characters of Z85's alphabet: a path like this was once taken for a
  // key itself (the test above failed when its temporary folder had this length).
  TempDir dir("sched-keys");
  std::string name = "n";
  while ((dir.str() + "/" + name + ".key").size() < 40) name += "x";
  const std::string path = dir.str() + "/" + name + ".key";
  ASSERT_EQ(path.size(), 40u) << path;
  ASSERT_TRUE(proto::curve::is_key(path)) << path;
  const auto [made, key] = run_sched({"keys", "new", name, "--out", dir.str()});
  ASSERT_EQ(made, 0) << key;
  const auto [shown, shown_key] = run_sched({"keys", "show", path});
  EXPECT_EQ(shown, 0);
  EXPECT_EQ(shown_key, key.substr(0, key.find('\n')) + "\n");
}

TEST(Security, AnAgentRefusedAtFirstConnectsOnceItsKeyIsAuthorised) {
  LocalCluster cluster;
  // The agent starts before the administrator has added its key: schedd
  // refuses it, it says so, and tries a new link until the key is in.
  const auto key = proto::curve::write_key_pair(cluster.keys_dir(), "late");
  TempDir dir("sched-late");
  Process agent({SCHED_NODEAGENT_BIN, "--engine", cluster.agent_endpoint(), "--node-name", "n4",
                 "--cores", "1", "--spool-dir", dir.str() + "/spool", "--secret-key-file",
                 cluster.keys_dir() + "/late.key", "--server-public-key-file",
                 cluster.keys_dir() + "/schedd.pub"},
                dir.str() + "/agent.log");
  EXPECT_TRUE(eventually([&] {
    return read_file(dir.str() + "/agent.log").find("refused this key") != std::string::npos;
  })) << read_file(dir.str() + "/agent.log");
  EXPECT_TRUE(node_names(cluster).empty());
  std::ofstream(cluster.authorized_agents_file(), std::ios::app) << key.public_key << " n4\n";
  EXPECT_TRUE(cluster.wait_nodes_up(1)) << read_file(dir.str() + "/agent.log") << cluster.logs();
  EXPECT_EQ(node_names(cluster), std::vector<std::string>{"n4"});
  agent.signal(SIGTERM);
  agent.wait(std::chrono::seconds(5));
}
