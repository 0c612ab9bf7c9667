// Why a policy's script failed (at load, at a reload, in a pass): what kind
// of failure, the message for people, and where in the script when Lua said
// so. It travels in the policy.error event (docs/protocol.md §9) and in
// `sched policy info`, so that tools can point at the line without parsing
// the message.
#pragma once

#include <string>
#include <string_view>

namespace sched {

enum class PolicyFailureCode {
  Syntax,   // the file (or a module it requires) does not parse
  Runtime,  // a Lua error raised while running (load, schedule, on_event, save, restore)
  // A bounded call (a pass, on_event, save, restore, the file's top level)
  // ran past LuaPolicyOptions::instruction_limit or time_limit_s, even if the
  // policy caught the error with pcall (LuaRuntime::call_bounded).
  Timeout,
  Memory,  // the memory bound was hit
  Api,     // the policy breaks the policy API (no schedule, api ~= 1, save returns a function, ...)
  Io,      // the file cannot be read
};

// "syntax", "runtime", "timeout", "memory", "api", "io".
std::string_view to_string(PolicyFailureCode code);

struct PolicyFailure {
  PolicyFailureCode code = PolicyFailureCode::Runtime;
  // For people, as Lua gave it (with its "file:line: " prefix) and with what
  // was being done in front: "dry pass: fcfs.lua:12: attempt to index a nil value".
  std::string message;
  std::string file;  // the script Lua named ("fcfs.lua", "lib/queue.lua"); "" when unknown
  int line = 0;      // 1-based; 0 when unknown
  double time = 0;   // when it happened (the engine's clock), set by whoever records it

  // A failure of `code` whose file and line are read from a Lua message
  // ("fcfs.lua:12: text"; none when the message has no such prefix).
  static PolicyFailure from_lua(PolicyFailureCode code, std::string lua_message);
  // The same failure with `context` put in front of its message ("dry pass: ").
  PolicyFailure prefixed(const std::string& context) const;
};

}  // namespace sched
