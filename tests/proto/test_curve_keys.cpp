// CURVE key files and schedd's authorised agent keys (docs/security.md §3):
// what is accepted, and that every bad line is refused with its line number.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sched/proto/authorized_keys.hpp"
#include "sched/proto/curve.hpp"

using namespace sched::proto;
namespace fs = std::filesystem;

namespace {

class TempFolder {
 public:
  TempFolder() {
    char pattern[] = "/tmp/sched-keys-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The error `parse` throws for `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    AuthorizedAgents::parse(text, "agents");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CurveKeys, AWrittenPairReadsBackAndTheSecretIsPrivate) {
  TempFolder dir;
  const auto pair = curve::write_key_pair(dir.path(), "n1");
  EXPECT_TRUE(curve::is_key(pair.public_key));
  EXPECT_TRUE(curve::is_key(pair.secret_key));
  EXPECT_EQ(curve::public_of(pair.secret_key), pair.public_key);
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() / "n1.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto read = curve::read_secret_key_file(dir.path() / "n1.key");
  EXPECT_EQ(read.secret_key, pair.secret_key);
  EXPECT_EQ(read.public_key, pair.public_key);
  EXPECT_EQ(curve::read_public_key_file(dir.path() / "n1.pub"), pair.public_key);
  // Written again, the pair is kept; overwritten, it is a new one.
  EXPECT_EQ(curve::write_key_pair(dir.path(), "n1").secret_key, pair.secret_key);
  EXPECT_NE(curve::write_key_pair(dir.path(), "n1", true).secret_key, pair.secret_key);
}

TEST(CurveKeys, ASecretKeyOthersCanReadIsRefused) {
  TempFolder dir;
  curve::write_key_pair(dir.path(), "n1");
  ::chmod((dir.path() / "n1.key").c_str(), 0644);
  try {
    curve::read_secret_key_file(dir.path() / "n1.key");
    FAIL() << "a key readable by others was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
  }
}

TEST(CurveKeys, ABrokenKeyFileNamesTheFile) {
  TempFolder dir;
  const fs::path file = dir.path() / "schedd.pub";
  std::ofstream(file) << "# a comment\nnot-a-key\n";
  try {
    curve::read_public_key_file(file);
    FAIL() << "a broken key was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("40 characters"), std::string::npos) << e.what();
  }
  EXPECT_THROW(curve::read_public_key_file(dir.path() / "missing.pub"), std::runtime_error);
}

TEST(CurveKeys, LoopbackEndpoints) {
  EXPECT_TRUE(curve::is_loopback_endpoint("tcp://127.0.0.1:7100"));
  EXPECT_TRUE(curve::is_loopback_endpoint("tcp://localhost:7100"));
  EXPECT_TRUE(curve::is_loopback_endpoint("tcp://[::1]:7100"));
  EXPECT_TRUE(curve::is_loopback_endpoint("ipc:///run/sched.ipc"));
  EXPECT_FALSE(curve::is_loopback_endpoint("tcp://*:7100"));
  EXPECT_FALSE(curve::is_loopback_endpoint("tcp://0.0.0.0:7100"));
  EXPECT_FALSE(curve::is_loopback_endpoint("tcp://10.0.0.1:7100"));
  EXPECT_FALSE(curve::is_loopback_endpoint("tcp://head.cluster:7100"));
  EXPECT_FALSE(curve::is_loopback_endpoint("tcp://127.0.0.1.evil.org:7100"));
}

TEST(AuthorizedKeys, BindsKeysToNodeNamesAndRanges) {
  const auto a = curve::generate().public_key;
  const auto b = curve::generate().public_key;
  const auto keys = AuthorizedAgents::parse(
      "# the cluster\n\n" + a + " n[1-3],login  # rack 1\n" + b + "   gpu[08-10]\n", "agents");
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys.allows(a, "n1"));
  EXPECT_TRUE(keys.allows(a, "n3"));
  EXPECT_TRUE(keys.allows(a, "login"));
  EXPECT_FALSE(keys.allows(a, "n4"));
  EXPECT_FALSE(keys.allows(a, "gpu08"));
  EXPECT_TRUE(keys.allows(b, "gpu08"));
  EXPECT_TRUE(keys.allows(b, "gpu10"));
  EXPECT_FALSE(keys.allows(b, "gpu8"));
  EXPECT_EQ(keys.nodes_text(a), "n[1-3],login");
  const auto stranger = curve::generate().public_key;
  EXPECT_FALSE(keys.known(stranger));
  EXPECT_FALSE(keys.allows(stranger, "n1"));
}

TEST(AuthorizedKeys, AKeyStartingWithHashIsNoComment) {
  // # is a Z85 character: a key may begin with it.
  const std::string key = "#" + curve::generate().public_key.substr(1);
  const auto keys = AuthorizedAgents::parse(key + " n1\n", "agents");
  EXPECT_TRUE(keys.allows(key, "n1"));
}

TEST(AuthorizedKeys, BadLinesAreRefusedWithTheirLineNumber) {
  const auto a = curve::generate().public_key;
  const auto b = curve::generate().public_key;
  const std::string good = "# ok\n" + a + " n1\n";  // lines 1 and 2
  EXPECT_EQ(parse_error(good), "");
  EXPECT_EQ(parse_error(good + "short-key n2\n"),
            "agents:3: 'short-key' is not a CURVE public key (40 characters of Z85 text)");
  EXPECT_EQ(parse_error(good + b + "\n"),
            "agents:3: the key names no node (<key> <nodes> expected)");
  EXPECT_EQ(parse_error(good + b + " n2 n3\n"),
            "agents:3: 'n3' after the node list (no spaces inside it: n1,n2 or n[1-2])");
  EXPECT_EQ(parse_error(good + a + " n2\n"), "agents:3: the key is listed already on line 2");
  EXPECT_EQ(parse_error(good + b + " n[0-2]\n"),
            "agents:3: node n1 belongs to the key of line 2 already");
  EXPECT_EQ(parse_error(good + b + " n[3-2]\n"), "agents:3: 'n[3-2]': range 3-2 runs backwards");
  EXPECT_EQ(parse_error(good + b + " n[2-x]\n"),
            "agents:3: 'n[2-x]': a range bound must be a number");
  EXPECT_EQ(parse_error(good + b + " n/2\n"),
            "agents:3: 'n/2' is not a node name (letters, digits, - _ . only)");
  EXPECT_EQ(parse_error(good + b + " n2,,n3\n"), "agents:3: an empty name in 'n2,,n3'");
  EXPECT_EQ(parse_error(good + b + " n[1-2][3-4]\n"),
            "agents:3: 'n[1-2][3-4]': one range in brackets, n[1-4], expected");
  EXPECT_NE(parse_error(good + b + " n[1-999999999]\n").find("agents:3: 'n[1-999999999]': more"),
            std::string::npos);
}

TEST(AuthorizedKeys, NodeListsExpand) {
  EXPECT_EQ(expand_node_list("n[1-3]"), (std::set<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(expand_node_list("n[01-02,5]x,login"),
            (std::set<std::string>{"n01x", "n02x", "n5x", "login"}));
  EXPECT_EQ(expand_node_list("[7-8]"), (std::set<std::string>{"7", "8"}));
}
