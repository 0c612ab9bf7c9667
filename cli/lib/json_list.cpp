#include "json_list.hpp"

namespace sched::cli {

JsonList::JsonList(std::ostream& out, std::string key) : out_(out), key_(std::move(key)) {}

void JsonList::add(const nlohmann::json& item) {
  if (empty_) {
    out_ << "{\n  " << nlohmann::json(key_).dump() << ": [\n";
  } else {
    out_ << ",\n";
  }
  empty_ = false;
  // dump(2) of the item, moved in by the two levels it sits under.
  const std::string text = item.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string indented = "    ";
  indented.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "    ";
  }
  out_ << indented;
}

void JsonList::finish() {
  if (empty_) {
    out_ << "{\n  " << nlohmann::json(key_).dump() << ": []\n}\n";
  } else {
    out_ << "\n  ]\n}\n";
  }
}

}  // namespace sched::cli
