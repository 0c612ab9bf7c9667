// One negotiation policy file in its own sandboxed Lua 5.4 state (issue 20,
// docs/policy-api.md §12): the same rules as the engine's scheduling
// policies (only base, string, table, math and utf8; no io, os, package,
// dofile or loadfile; `load` of text only; globals locked once the file has
// loaded), an instruction bound per call and a memory bound, and hot reload:
// an edited file is loaded into a fresh state and replaces the running one
// only if it loads; otherwise the last good version keeps running and the
// error is kept for the owner. The engine's host (engine/lua/) is bound to
// its scheduling pass and `ctx`, so this is a small host of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct lua_State;

namespace sched::invasive {

struct LuaHostOptions {
  std::uint64_t instruction_limit = 50'000'000;  // VM instructions per call
  std::size_t memory_limit = 64u << 20;          // bytes the state may hold
};

// A Lua table value was not what the host expects (field named).
class PolicyShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LuaHost {
 public:
  // `required`: the functions the returned table must hold.
  LuaHost(std::string path, std::vector<std::string> required, LuaHostOptions options = {});
  ~LuaHost();
  LuaHost(const LuaHost&) = delete;
  LuaHost& operator=(const LuaHost&) = delete;

  // Loads the file (the first time or again). On failure the running
  // version, if any, stays; returns the error ("file:line: why").
  std::optional<std::string> load();
  // Loads again when the file's content changed since the last attempt;
  // true when a new version was installed.
  bool reload_if_changed();
  bool loaded() const { return L_ != nullptr; }
  const std::string& path() const { return path_; }
  // The policy's `name` field, else the file name.
  const std::string& name() const { return name_; }
  std::uint64_t reloads() const { return reloads_; }
  std::uint64_t failures() const { return failures_; }
  const std::optional<std::string>& last_error() const { return last_error_; }

  // Calls policy function `function`: `push_args` pushes its arguments and
  // returns how many; `read` reads the results at stack indexes base ..
  // base + nresults - 1 (with raw access only; it may throw PolicyShapeError). Returns the error
  // when the call failed, hit a bound, or its results were refused; the state is left clean either
  // way.
  std::optional<std::string> call(const std::string& function, int nresults,
                                  const std::function<int(lua_State*)>& push_args,
                                  const std::function<void(lua_State*, int base)>& read);

  // The Lua state with its bounds (opaque; public for the allocator and
  // the count hook).
  struct State;

 private:
  std::optional<std::string> fail(std::string message);

  std::string path_;
  std::vector<std::string> required_;
  LuaHostOptions options_;
  std::unique_ptr<State> state_;
  lua_State* L_ = nullptr;
  std::string name_;
  std::string seen_text_;
  std::uint64_t reloads_ = 0;
  std::uint64_t failures_ = 0;
  std::optional<std::string> last_error_;
};

}  // namespace sched::invasive
