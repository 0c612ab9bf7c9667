// `sched queue`, `sched acct` and `sched nodes` follow schedd's cursor: with
// pages of one or two entries (server.max_page_items) they still list every
// job or node once, in order, with schedd applying the filters.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

// run_sched and CliRun: cluster.hpp.

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first word of each line after `skip` header lines.
std::vector<std::string> first_words(const std::string& text, std::size_t skip) {
  std::vector<std::string> words;
  const auto lines = lines_of(text);
  for (std::size_t i = skip; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::string word;
    in >> word;
    words.push_back(word);
  }
  return words;
}

std::vector<std::string> ids_text(const std::vector<std::int64_t>& ids) {
  std::vector<std::string> out;
  for (std::int64_t id : ids) out.push_back(std::to_string(id));
  return out;
}

TEST(CliPages, QueueListsEveryJobOnceAcrossPagesOfOne) {
  ClusterOptions options;
  options.max_page_items = 1;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(cluster.submit("#!/bin/sh\nsleep 30\n"));
  ASSERT_TRUE(cluster.wait_state(ids[0], "RUNNING")) << cluster.logs();

  auto run = run_sched(cluster, {"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 1), ids_text(ids)) << run.out;
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 6u) << run.out;
  EXPECT_NE(lines[1].find(" R "), std::string::npos) << run.out;
  EXPECT_NE(lines[2].find("(Resources)"), std::string::npos) << run.out;
  EXPECT_NE(lines[3].find("(Priority)"), std::string::npos) << run.out;

  run = run_sched(cluster, {"queue", "--json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  std::vector<std::int64_t> listed;
  for (const auto& job : doc["jobs"]) listed.push_back(job["id"]);
  EXPECT_EQ(listed, ids);

  // Filtered in schedd: only pending ones, only two of the ids.
  run = run_sched(cluster, {"queue", "-t", "PD", "-j",
                            std::to_string(ids[0]) + "," + std::to_string(ids[3]) + "," +
                                std::to_string(ids[4])});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 1), ids_text({ids[3], ids[4]})) << run.out;
}

TEST(CliPages, AcctListsEveryEndedJobOnceAcrossPagesOfTwo) {
  ClusterOptions options;
  options.max_page_items = 2;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 7; ++i) {
    ids.push_back(cluster.submit(i % 3 == 2 ? "#!/bin/sh\nexit 2\n" : "#!/bin/sh\ntrue\n"));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(cluster.wait_state(ids[i], i % 3 == 2 ? "FAILED" : "COMPLETED")) << cluster.logs();
  }
  // One node: they ran, and ended, one after another. Since issue 18 acct
  // lists the newest first, and --limit keeps the newest.
  const std::vector<std::int64_t> newest_first(ids.rbegin(), ids.rend());
  auto run = run_sched(cluster, {"acct"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 2), ids_text(newest_first)) << run.out;

  run = run_sched(cluster, {"acct", "--json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  std::vector<std::int64_t> listed;
  for (const auto& job : doc["jobs"]) listed.push_back(job["id"]);
  EXPECT_EQ(listed, newest_first);

  run = run_sched(cluster, {"acct", "--limit", "3"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 2), ids_text({ids[6], ids[5], ids[4]})) << run.out;

  run = run_sched(cluster, {"acct", "-s", "F"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 2), ids_text({ids[5], ids[2]})) << run.out;
  run = run_sched(cluster, {"acct", "-s", "CD", "--json", "--limit", "4"});
  ASSERT_EQ(run.status, 0) << run.err;
  listed.clear();
  const auto completed = nlohmann::json::parse(run.out);
  for (const auto& job : completed["jobs"]) {
    EXPECT_EQ(job["state"], "COMPLETED");
    listed.push_back(job["id"]);
  }
  EXPECT_EQ(listed, (std::vector<std::int64_t>{ids[6], ids[4], ids[3], ids[1]}));
}

TEST(CliPages, NodesListsEveryNodeAcrossPagesOfOneAndFiltersInSchedd) {
  ClusterOptions options;
  options.max_page_items = 1;
  LocalCluster cluster(options);
  for (const char* node : {"n3", "n1", "n10", "n2"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(4)) << cluster.logs();
  ASSERT_EQ(run_sched(cluster, {"nodes", "drain", "n2"}).status, 0);

  auto run = run_sched(cluster, {"nodes", "-N"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 1), (std::vector<std::string>{"n1", "n2", "n3", "n10"}))
      << run.out;
  run = run_sched(cluster, {"nodes"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(std::regex_search(run.out, std::regex(R"(\nidle\s+3\s+n\[1,3,10\]\n)"))) << run.out;

  run = run_sched(cluster, {"nodes", "-N", "-t", "drain"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 1), (std::vector<std::string>{"n2"})) << run.out;
  run = run_sched(cluster, {"nodes", "-N", "-n", "n[1-3]", "-t", "idle"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out, 1), (std::vector<std::string>{"n1", "n3"})) << run.out;
  run = run_sched(cluster, {"nodes", "--json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["nodes"].size(), 4u) << run.out;

  run = run_sched(cluster, {"nodes", "-t", "sleepy"});
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("unknown node state 'sleepy'"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sched::testing
