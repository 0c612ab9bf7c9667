// JsonList: `sched queue --json` and `sched acct --json` print each page as
// it arrives, and the whole is what one dump of the full list printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "json_list.hpp"

namespace sched::cli {
namespace {

std::string whole(const std::string& key, const nlohmann::json& items) {
  return nlohmann::json{{key, items}}.dump(2, ' ', false,
                                           nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string streamed(const std::string& key, const nlohmann::json& items) {
  std::ostringstream out;
  JsonList list(out, key);
  for (const auto& item : items) list.add(item);
  list.finish();
  return out.str();
}

TEST(JsonList, ItemByItemIsByteForByteTheWholeDump) {
  nlohmann::json items = nlohmann::json::array();
  EXPECT_EQ(streamed("jobs", items), whole("jobs", items));
  items.push_back({{"id", 1}, {"name", "a\nb \"quoted\""}, {"nodelist", {"n1", "n2"}}});
  EXPECT_EQ(streamed("jobs", items), whole("jobs", items));
  items.push_back({{"id", 2}, {"nodelist", nlohmann::json::array()}, {"env", {{"K", {1, 2}}}}});
  items.push_back({{"id", 3}, {"name", "caf\xc3\xa9"}, {"empty", nlohmann::json::object()}});
  EXPECT_EQ(streamed("jobs", items), whole("jobs", items));
  EXPECT_EQ(streamed("nodes", items), whole("nodes", items));
}

TEST(JsonList, InvalidUtf8IsReplacedNotFatal) {
  nlohmann::json items = nlohmann::json::array();
  items.push_back({{"name", "caf\xe9"}});
  const std::string out = streamed("jobs", items);
  EXPECT_EQ(out, whole("jobs", items));
  EXPECT_NE(out.find("caf\xef\xbf\xbd"), std::string::npos);
}

}  // namespace
}  // namespace sched::cli
