#include "sched/lua_policy.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <type_traits>

#include "lua_runtime.hpp"
#include "sched/event.hpp"

namespace sched {

std::optional<std::pair<std::string, ParamValue>> parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  std::string key = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  if (value == "true") return std::pair{key, ParamValue{true}};
  if (value == "false") return std::pair{key, ParamValue{false}};
  if (!value.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long integer = std::strtoll(value.c_str(), &end, 10);
    if (errno == 0 && *end == '\0') return std::pair{key, ParamValue{integer}};
    errno = 0;
    const double number = std::strtod(value.c_str(), &end);
    if (errno == 0 && *end == '\0') return std::pair{key, ParamValue{number}};
  }
  return std::pair{key, ParamValue{value}};
}

std::string param_text(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, double>) {
          // The shortest text that reads back as the same double, and as a
          // double (2.0, not 2): params are journaled as text (issue 22).
          std::string text = fmt::format("{}", v);
          if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
          return text;
        } else {
          return std::to_string(v);
        }
      },
      value);
}

LuaPolicy::LuaPolicy(std::string path, std::unique_ptr<LuaRuntime> runtime)
    : path_(std::move(path)), rt_(std::move(runtime)) {
  time_dependent_ = rt_->time_dependent();
  idle_nodes_only_ = rt_->idle_nodes_only();
}

LuaPolicy::~LuaPolicy() = default;

std::unique_ptr<LuaPolicy> LuaPolicy::load(const std::string& path,
                                           const LuaPolicyOptions& options) {
  auto runtime = std::make_unique<LuaRuntime>(path, options);
  try {
    runtime->load_policy();
  } catch (PolicyLoadError& e) {
    e.set_sources(runtime->sources());  // a broken lib module is watched too
    throw;
  }
  return std::unique_ptr<LuaPolicy>(new LuaPolicy(path, std::move(runtime)));
}

std::string LuaPolicy::name() const { return rt_->policy_name(); }

std::optional<PolicyFailure> LuaPolicy::schedule(PassContext& ctx) {
  return rt_->run_schedule(ctx);
}

void LuaPolicy::on_event(const Event& event) {
  if (auto error = rt_->run_on_event(event)) {
    ++event_errors_;
    spdlog::warn("policy {}: on_event({}): {}", name(), topic(event.type), error->message);
  }
}

std::optional<SavedPolicyState> LuaPolicy::save(std::optional<PolicyFailure>* failure) {
  std::string source;
  bool present = false;
  if (auto e = rt_->run_save(&source, &present)) {
    if (failure) *failure = std::move(e);
    return std::nullopt;
  }
  if (!present) return std::nullopt;
  return SavedPolicyState{std::move(source)};
}

std::optional<PolicyFailure> LuaPolicy::restore(const SavedPolicyState& state) {
  return rt_->run_restore(state.lua_source);
}

const std::vector<PolicySource>& LuaPolicy::sources() const { return rt_->sources(); }

std::size_t LuaPolicy::memory_used() const { return rt_->memory_used(); }

}  // namespace sched
