#include "job_ids.hpp"

#include <limits>
#include <stdexcept>

#include "sched/job_array.hpp"

namespace sched::cli {
namespace {

std::optional<std::int64_t> parse_id(const std::string& text) {
  std::size_t used = 0;
  long long id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || id <= 0 || text.front() == '+') return std::nullopt;
  return id;
}

// Splits at ',' outside brackets: "1_[2,3],4" is two items.
std::vector<std::string> split_items(const std::string& word) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  for (char c : word) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

std::string JobIdRef::text() const {
  return task ? array_task_name(id, *task) : std::to_string(id);
}

std::vector<JobIdRef> parse_job_refs(const std::vector<std::string>& words) {
  std::vector<JobIdRef> refs;
  for (const std::string& word : words) {
    for (const std::string& item : split_items(word)) {
      const auto bad = [&]() { return std::runtime_error("'" + item + "' is not a job id"); };
      const auto underscore = item.find('_');
      const auto id = parse_id(item.substr(0, underscore));
      if (!id) throw bad();
      if (underscore == std::string::npos) {
        refs.push_back({*id, std::nullopt});
        continue;
      }
      std::string tasks = item.substr(underscore + 1);
      if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']') {
        tasks = tasks.substr(1, tasks.size() - 2);
      } else if (tasks.find_first_not_of("0123456789") != std::string::npos) {
        throw bad();
      }
      auto indices = parse_job_array(tasks, kMaxArraySizeCeiling);
      if (!indices.ok() || indices->throttle != 0) {
        throw std::runtime_error(
            "'" + item + "' is not a job id" +
            (indices.ok() ? std::string() : ": " + indices.status().message()));
      }
      for (int index : indices->indices) refs.push_back({*id, index});
    }
  }
  return refs;
}

std::string pending_array_name(std::int64_t array_id, const std::vector<int>& indices,
                               int throttle) {
  if (indices.size() == 1 && throttle == 0) return array_task_name(array_id, indices.front());
  std::string ranges;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!ranges.empty()) ranges += ',';
    ranges += std::to_string(indices[i]);
    if (j > i) ranges += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  if (throttle > 0) ranges += "%" + std::to_string(throttle);
  return std::to_string(array_id) + "_[" + ranges + "]";
}

}  // namespace sched::cli
