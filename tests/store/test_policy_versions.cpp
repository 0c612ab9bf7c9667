// The journal of deployed policy versions (issue 22 item 4): append only,
// with every file's text, kept across a reopen; a schema-2 file gains it, a
// schema-3 file its partition column (issue 20 item 1).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "state_store.hpp"

namespace sched {
namespace {

namespace fs = std::filesystem;

class PolicyVersionsStore : public ::testing::Test {
 protected:
  PolicyVersionsStore() {
    dir_ = fs::temp_directory_path() /
           ("sched-policy-versions-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "state.db").string();
  }
  ~PolicyVersionsStore() override { fs::remove_all(dir_); }

  static PolicyVersionRecord record(const std::string& name, const std::string& text) {
    PolicyVersionRecord r;
    r.time = 100.5;
    r.user = "root";
    r.how = "set";
    r.name = name;
    r.path = "/etc/sched/" + name + ".lua";
    r.hash = "abc" + name;
    r.params = {{"depth", "3"}, {"mode", "fast"}};
    r.files = {{name + ".lua", r.path, text},
               {"lib/easy.lua", "/etc/sched/lib/easy.lua", "-- lib\n"}};
    return r;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(PolicyVersionsStore, AppendsAndReadsBackInOrder) {
  {
    auto store = StateStore::open(path_);
    EXPECT_TRUE(store->policy_versions().empty());
    EXPECT_EQ(store->append_policy_version(record("fcfs", "return {'\"quotes\"'}\n")), 1u);
    EXPECT_EQ(store->append_policy_version(record("easy", "-- easy\n")), 2u);
  }
  auto store = StateStore::open(path_);
  const auto versions = store->policy_versions();
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].version, 1u);
  EXPECT_EQ(versions[0].name, "fcfs");
  EXPECT_EQ(versions[0].user, "root");
  EXPECT_EQ(versions[0].how, "set");
  EXPECT_EQ(versions[0].time, 100.5);
  EXPECT_EQ(versions[0].hash, "abcfcfs");
  EXPECT_EQ(versions[0].path, "/etc/sched/fcfs.lua");
  EXPECT_EQ(versions[0].params.at("depth"), "3");
  EXPECT_EQ(versions[0].params.at("mode"), "fast");
  ASSERT_EQ(versions[0].files.size(), 2u);
  EXPECT_EQ(versions[0].files[0].text, "return {'\"quotes\"'}\n");
  EXPECT_EQ(versions[0].files[1].name, "lib/easy.lua");
  EXPECT_EQ(versions[1].version, 2u);
  EXPECT_EQ(versions[1].files[0].text, "-- easy\n");
}

TEST_F(PolicyVersionsStore, ReadsOneVersionAndTheLast) {
  auto store = StateStore::open(path_);
  EXPECT_FALSE(store->last_policy_version());
  EXPECT_FALSE(store->policy_version(1));
  store->append_policy_version(record("fcfs", "-- one\n"));
  store->append_policy_version(record("easy", "-- two\n"));
  store->append_policy_version(record("perf", "-- three\n"));
  const auto second = store->policy_version(2);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->name, "easy");
  EXPECT_EQ(second->files[0].text, "-- two\n");
  EXPECT_EQ(second->params.at("mode"), "fast");
  const auto last = store->last_policy_version();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->version, 3u);
  EXPECT_EQ(last->name, "perf");
  EXPECT_FALSE(store->policy_version(4));
  EXPECT_FALSE(store->policy_version(0));
}

TEST_F(PolicyVersionsStore, ASchema2FileGainsTheTable) {
  StateStore::open(path_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE policy_versions; PRAGMA user_version = 2;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = StateStore::open(path_);
  EXPECT_TRUE(store->policy_versions().empty());
  EXPECT_EQ(store->append_policy_version(record("fcfs", "x")), 1u);
  EXPECT_EQ(store->policy_versions().size(), 1u);
}

TEST_F(PolicyVersionsStore, EachPartitionHasItsOwnLastVersion) {
  auto store = StateStore::open(path_);
  PolicyVersionRecord gpu = record("fcfs", "-- gpu\n");
  gpu.partition = "gpu";
  store->append_policy_version(record("easy", "-- scheduler\n"));
  store->append_policy_version(gpu);
  store->append_policy_version(record("perf", "-- scheduler again\n"));
  const auto scheduler = store->last_policy_version();
  ASSERT_TRUE(scheduler);
  EXPECT_EQ(scheduler->version, 3u);
  EXPECT_EQ(scheduler->partition, "");
  const auto of_gpu = store->last_policy_version("gpu");
  ASSERT_TRUE(of_gpu);
  EXPECT_EQ(of_gpu->version, 2u);
  EXPECT_EQ(of_gpu->partition, "gpu");
  EXPECT_EQ(of_gpu->files[0].text, "-- gpu\n");
  EXPECT_FALSE(store->last_policy_version("other"));
  EXPECT_EQ(store->policy_version(2)->partition, "gpu");
  // The one before a version, of the same partition only.
  const auto before = store->last_policy_version("", 3);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->version, 1u);
  EXPECT_FALSE(store->last_policy_version("", 1));
  EXPECT_FALSE(store->last_policy_version("gpu", 2));
  // Each partition's last number, without the files.
  EXPECT_EQ(store->policy_version_heads(),
            (std::map<std::string, std::uint64_t>{{"", 3u}, {"gpu", 2u}}));
}

TEST_F(PolicyVersionsStore, ASchema3FileKeepsItsVersionsAsTheSchedulers) {
  // A schema-3 table (no partition column) with one version in it.
  {
    auto store = StateStore::open(path_);
    store->append_policy_version(record("fcfs", "-- old\n"));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE policy_versions DROP COLUMN partition; "
                         "PRAGMA user_version = 3;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = StateStore::open(path_);
  const auto last = store->last_policy_version();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->name, "fcfs");
  EXPECT_EQ(last->partition, "");
  PolicyVersionRecord gpu = record("easy", "-- new\n");
  gpu.partition = "gpu";
  EXPECT_EQ(store->append_policy_version(gpu), 2u);
  EXPECT_EQ(store->last_policy_version("gpu")->name, "easy");
}

}  // namespace
}  // namespace sched
