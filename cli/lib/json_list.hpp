// `{"jobs": [...]}` written an item at a time, byte for byte as
// nlohmann::json{{"jobs", items}}.dump(2) would print the whole, so that a
// listing of any length goes out page by page as schedd sends it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace sched::cli {

class JsonList {
 public:
  // Invalid UTF-8 in the items is written as U+FFFD (dump's `replace`).
  JsonList(std::ostream& out, std::string key);
  void add(const nlohmann::json& item);
  // The closing brackets and a newline; once, after the last item.
  void finish();

 private:
  std::ostream& out_;
  std::string key_;
  bool empty_ = true;
};

}  // namespace sched::cli
