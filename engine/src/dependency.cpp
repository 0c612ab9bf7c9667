#include "sched/dependency.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace sched {
namespace {

constexpr std::array<std::string_view, 5> kTypeNames = {"after", "afterany", "afterok",
                                                        "afternotok", "singleton"};

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

Status bad(std::string_view text, const std::string& why) {
  return Status::invalid("dependency '" + std::string(text) + "': " + why);
}

}  // namespace

std::string_view to_string(DependencyType type) {
  return kTypeNames[static_cast<std::size_t>(type)];
}

std::vector<JobId> Dependency::jobs() const {
  std::vector<JobId> ids;
  for (const DependencyTerm& term : terms) {
    for (JobId id : term.jobs) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  return ids;
}

Result<Dependency> parse_dependency(std::string_view text) {
  Dependency dependency;
  if (text.empty()) return dependency;
  const bool comma = text.find(',') != std::string_view::npos;
  const bool question = text.find('?') != std::string_view::npos;
  if (comma && question) return bad(text, "',' (all) and '?' (any) cannot be mixed");
  dependency.any = question;
  for (std::string_view term_text : split(text, question ? '?' : ',')) {
    if (term_text.empty()) return bad(text, "an empty term");
    const std::vector<std::string_view> parts = split(term_text, ':');
    const auto type = std::find(kTypeNames.begin(), kTypeNames.end(), parts[0]);
    if (type == kTypeNames.end()) {
      return bad(text, "unknown type '" + std::string(parts[0]) +
                           "' (after, afterany, afterok, afternotok, singleton)");
    }
    DependencyTerm term;
    term.type = static_cast<DependencyType>(type - kTypeNames.begin());
    if (term.type == DependencyType::Singleton) {
      if (parts.size() > 1) return bad(text, "singleton takes no job ids");
    } else if (parts.size() < 2) {
      return bad(text, "'" + std::string(parts[0]) + "' needs job ids (" + std::string(parts[0]) +
                           ":ID[:ID...])");
    }
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::string_view id_text = parts[i];
      JobId id = 0;
      const auto [end, error] =
          std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
      if (id_text.empty() || error != std::errc() || end != id_text.data() + id_text.size() ||
          id <= 0) {
        return bad(text, "'" + std::string(id_text) + "' is not a job id");
      }
      term.jobs.push_back(id);
    }
    dependency.terms.push_back(std::move(term));
  }
  return dependency;
}

std::string to_string(const Dependency& dependency) {
  std::string text;
  for (const DependencyTerm& term : dependency.terms) {
    if (!text.empty()) text += dependency.any ? '?' : ',';
    text += to_string(term.type);
    for (JobId id : term.jobs) text += ":" + std::to_string(id);
  }
  return text;
}

Satisfaction satisfaction(DependencyType type, JobState state, bool started) {
  const bool ended = is_terminal(state);
  switch (type) {
    case DependencyType::After:
      return started || ended ? Satisfaction::Satisfied : Satisfaction::Waiting;
    case DependencyType::AfterAny:
      return ended ? Satisfaction::Satisfied : Satisfaction::Waiting;
    case DependencyType::AfterOk:
      if (!ended) return Satisfaction::Waiting;
      return state == JobState::Completed ? Satisfaction::Satisfied : Satisfaction::Never;
    case DependencyType::AfterNotOk:
      if (!ended) return Satisfaction::Waiting;
      return state == JobState::Completed ? Satisfaction::Never : Satisfaction::Satisfied;
    case DependencyType::Singleton:
      break;  // not about one job's state: the engine decides
  }
  return Satisfaction::Waiting;
}

Satisfaction combine(const std::vector<Satisfaction>& parts, bool any) {
  const auto count = [&](Satisfaction s) { return std::count(parts.begin(), parts.end(), s); };
  if (parts.empty()) return Satisfaction::Satisfied;
  if (any) {
    if (count(Satisfaction::Satisfied) > 0) return Satisfaction::Satisfied;
    return count(Satisfaction::Never) == static_cast<long>(parts.size()) ? Satisfaction::Never
                                                                         : Satisfaction::Waiting;
  }
  if (count(Satisfaction::Never) > 0) return Satisfaction::Never;
  return count(Satisfaction::Satisfied) == static_cast<long>(parts.size()) ? Satisfaction::Satisfied
                                                                           : Satisfaction::Waiting;
}

}  // namespace sched
