#include "sched/policy_failure.hpp"

#include <cctype>

namespace sched {

std::string_view to_string(PolicyFailureCode code) {
  switch (code) {
    case PolicyFailureCode::Syntax:
      return "syntax";
    case PolicyFailureCode::Runtime:
      return "runtime";
    case PolicyFailureCode::Timeout:
      return "timeout";
    case PolicyFailureCode::Memory:
      return "memory";
    case PolicyFailureCode::Api:
      return "api";
    case PolicyFailureCode::Io:
      return "io";
  }
  return "runtime";
}

PolicyFailure PolicyFailure::from_lua(PolicyFailureCode code, std::string lua_message) {
  PolicyFailure failure;
  failure.code = code;
  // Lua puts "chunkname:line: " in front of an error raised in a script. The
  // first ':' followed by digits and ": " ends the chunk name (a name such as
  // [string "a:b"] may hold colons of its own).
  const std::string& m = lua_message;
  for (std::size_t colon = m.find(':'); colon != std::string::npos && colon > 0;
       colon = m.find(':', colon + 1)) {
    if (colon + 1 < m.size() && m[colon + 1] == ' ') break;  // "name: text": no location
    std::size_t end = colon + 1;
    while (end < m.size() && std::isdigit(static_cast<unsigned char>(m[end]))) ++end;
    if (end == colon + 1 || end + 1 >= m.size() || m[end] != ':' || m[end + 1] != ' ') continue;
    if (end - colon - 1 > 9) continue;  // not a line number an int holds
    failure.file = m.substr(0, colon);
    failure.line = std::stoi(m.substr(colon + 1, end - colon - 1));
    break;
  }
  failure.message = std::move(lua_message);
  return failure;
}

PolicyFailure PolicyFailure::prefixed(const std::string& context) const {
  PolicyFailure out = *this;
  out.message = context + message;
  return out;
}

}  // namespace sched
