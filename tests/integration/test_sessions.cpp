// Client sessions with a real schedd and munged (docs/security.md §2.1): a
// client authenticates once with MUNGE, then signs each request with its
// session's key; many requests may be in flight on one connection. What is
// replayed, forged or sent on another connection is refused and changes
// nothing; a session that schedd no longer knows (expired, restarted) is
// opened again without the caller noticing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <set>
#include <thread>

#include "cluster.hpp"
#include "sched/auth/credential.hpp"

using namespace sched;
using namespace sched::testing;
using namespace std::chrono_literals;

namespace {

proto::SubmitRequest sleeper(const LocalCluster& cluster, const std::string& name) {
  proto::SubmitRequest request;
  request.job.name = name;
  request.job.script = "#!/bin/sh\nsleep 1000\n";
  request.job.workdir = cluster.work_dir();
  return request;
}

proto::Corridor corridor(double lower, double upper) {
  proto::Corridor c;
  c.lower_w = lower;
  c.upper_w = upper;
  return c;
}

double upper_w(LocalCluster& cluster) {
  return cluster.client().call<proto::Corridor>(proto::type::kCorridorShow, proto::Empty{}).upper_w;
}

}  // namespace

TEST(Sessions, ASessionsRequestsAreItsCallersAndManyMayBeInFlight) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  auto client = cluster.connect();
  client->open_session();
  EXPECT_NE(client->session(), 0u);
  // 200 submissions in flight at once, their replies taken in order.
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 200; ++i) {
    seqs.push_back(client->post(proto::type::kSubmit, sleeper(cluster, "p" + std::to_string(i))));
  }
  std::vector<std::int64_t> ids;
  for (std::uint64_t seq : seqs) ids.push_back(client->take<proto::SubmitReply>(seq).id);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), ids.size());
  // Questions in flight, answers taken backwards: each reply is its own.
  std::vector<std::pair<std::int64_t, std::uint64_t>> asked;
  for (std::int64_t id : ids)
    asked.emplace_back(id, client->post(proto::type::kJobShow, proto::JobRef{id}));
  for (auto it = asked.rbegin(); it != asked.rend(); ++it) {
    const proto::JobInfo job = client->take<proto::JobReply>(it->second).job;
    EXPECT_EQ(job.id, it->first);
    EXPECT_EQ(job.name, "p" + std::to_string(it->first - ids.front()));
    EXPECT_EQ(job.user, auth::user_name(::geteuid()));
  }
  // An error in flight is its request's alone.
  const std::uint64_t missing = client->post(proto::type::kJobShow, proto::JobRef{999999});
  const std::uint64_t present = client->post(proto::type::kJobShow, proto::JobRef{ids.front()});
  EXPECT_EQ(client->take<proto::JobReply>(present).job.id, ids.front());
  EXPECT_THROW(client->take<proto::JobReply>(missing), proto::ProtoError);
}

TEST(Sessions, AReplayedForgedOrMovedRequestIsRefusedAndChangesNothing) {
  LocalCluster cluster;
  auto client = cluster.connect();
  client->open_session();
  const std::string bytes = client->request(proto::type::kCorridorSet, corridor(100, 200));
  EXPECT_EQ(client->raw(bytes).ok, true);
  cluster.client().call<proto::Empty>(proto::type::kCorridorSet, corridor(0, 0));
  // The same bytes again: a replay.
  const proto::Envelope again = client->raw(bytes);
  ASSERT_TRUE(again.error);
  EXPECT_EQ(again.error->code, "unauthenticated");
  EXPECT_EQ(again.error->message.rfind("replayed request: seq ", 0), 0u) << again.error->message;
  // A request with a MAC under another key, and one whose body was changed.
  const std::string packed = proto::encode_body(corridor(300, 400));
  const std::string forged = proto::encode_session_request(
      proto::type::kCorridorSet, 1000, packed, client->session(),
      proto::session::mac(std::string(32, 'k'), proto::type::kCorridorSet, 1000, packed));
  const proto::Envelope refused = client->raw(forged);
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.error->code, "unauthenticated");
  EXPECT_EQ(refused.error->message.rfind("wrong MAC", 0), 0u) << refused.error->message;
  // The body is in the request as packed: change its last byte.
  const std::string body = proto::encode_body(corridor(300, 400));
  std::string altered = client->request(proto::type::kCorridorSet, corridor(300, 400));
  const std::size_t at = altered.find(body);
  ASSERT_NE(at, std::string::npos);
  altered[at + body.size() - 1] ^= 1;
  const proto::Envelope changed = client->raw(altered);
  ASSERT_TRUE(changed.error);
  EXPECT_EQ(changed.error->code, "unauthenticated");
  // This session's request on another connection: gone there.
  auto other = cluster.connect();
  const proto::Envelope moved =
      other->raw(client->request(proto::type::kCorridorSet, corridor(300, 400)));
  ASSERT_TRUE(moved.error);
  EXPECT_EQ(moved.error->code, "session_gone");
  EXPECT_NE(moved.error->message.find("belongs to another connection"), std::string::npos);
  // An id schedd never gave.
  const proto::Envelope unknown = client->raw(proto::encode_session_request(
      proto::type::kCorridorSet, 2000, packed, client->session() + 1, std::string(64, '0')));
  ASSERT_TRUE(unknown.error);
  EXPECT_EQ(unknown.error->code, "session_gone");
  // A session is opened with MUNGE only, not from within another.
  try {
    client->call<proto::SessionOpened>(proto::type::kSessionOpen, proto::SessionOpen{});
    FAIL() << "a session opened a session";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "invalid");
  }
  EXPECT_DOUBLE_EQ(upper_w(cluster), 0);
  // The session still works after all that.
  client->call<proto::Empty>(proto::type::kCorridorSet, corridor(10, 20));
  EXPECT_DOUBLE_EQ(upper_w(cluster), 20);
}

TEST(Sessions, AnExpiredSessionOrOneLostInARestartIsOpenedAgainUnseen) {
  ClusterOptions options;
  options.session_ttl_s = 1;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  auto client = cluster.connect();
  client->open_session();
  const std::uint64_t first = client->session();
  const std::string old_bytes = client->request(proto::type::kStats, proto::Empty{});
  std::this_thread::sleep_for(1500ms);
  // Refused as gone, with nothing done...
  const proto::Envelope stale = client->raw(old_bytes);
  ASSERT_TRUE(stale.error);
  EXPECT_EQ(stale.error->code, "session_gone");
  // ...while call() opens a new session and sends again.
  EXPECT_NO_THROW(client->call<proto::StatsReply>(proto::type::kStats, proto::Empty{}));
  const std::uint64_t second = client->session();
  EXPECT_NE(second, first);
  const auto id =
      client->call<proto::SubmitReply>(proto::type::kSubmit, sleeper(cluster, "before"));
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  // The new schedd knows no session: the client opens one again.
  EXPECT_EQ(client->call<proto::JobReply>(proto::type::kJobShow, proto::JobRef{id.id}).job.name,
            "before");
  EXPECT_NE(client->session(), second);
}
