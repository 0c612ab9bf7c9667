// The answer of an engine input (submit, cancel, a node change, ...): success,
// or a typed failure with a message for people. The code says what kind of
// failure it was, so that a driver chooses its reply from it (schedd maps it
// to a wire error code in one place, schedd/status_codes.hpp) instead of
// reading the message or looking the job up again.
//
// Not for the checks of a policy's actions: those are refusals
// (sched/decision.hpp), data the engine counts per pass.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace sched {

enum class StatusCode {
  Ok,
  NotFound,  // no such job or node
  Conflict,  // the job or node is not in a state that allows it (already ended, id taken)
  Invalid,   // the request itself is wrong (a bad spec, a size outside the job's bounds)
};

constexpr std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::Ok:
      return "ok";
    case StatusCode::NotFound:
      return "not_found";
    case StatusCode::Conflict:
      return "conflict";
    case StatusCode::Invalid:
      return "invalid";
  }
  return "unknown";
}

// Success is a null pointer: no allocation, ok() is one comparison. The
// engine's functions that return one are [[nodiscard]] one by one rather than
// the class: schedd ignores Engine::set_node_up's answer where it knows the
// node (an agent that just registered), in files not switched over yet.
class Status {
 public:
  Status() = default;  // success
  Status(StatusCode code, std::string message)
      : rep_(code == StatusCode::Ok ? nullptr
                                    : std::make_unique<Rep>(Rep{code, std::move(message)})) {}
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status not_found(std::string message) {
    return {StatusCode::NotFound, std::move(message)};
  }
  static Status conflict(std::string message) { return {StatusCode::Conflict, std::move(message)}; }
  static Status invalid(std::string message) { return {StatusCode::Invalid, std::move(message)}; }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::Ok; }
  // For people: "no job 7". Empty on success.
  const std::string& message() const { return rep_ ? rep_->message : empty(); }

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }
  // "not_found: no job 7", or "ok".
  friend std::ostream& operator<<(std::ostream& out, const Status& status) {
    out << to_string(status.code());
    if (!status.ok()) out << ": " << status.message();
    return out;
  }

  // ---- Transitional (issue 12): the surface of the std::optional<std::string>
  // this replaces, so that schedd's message handlers compile unchanged until
  // they call throw_status (schedd/status_codes.hpp). True when it is an
  // ERROR (as an optional message was present); * and -> give the message.
  // Remove once no caller uses it.
  explicit operator bool() const { return !ok(); }
  const std::string& operator*() const { return message(); }
  const std::string* operator->() const { return &message(); }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  static const std::string& empty() {
    static const std::string none;
    return none;
  }
  std::unique_ptr<Rep> rep_;
};

// A value, or the Status of why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T v) : value(std::move(v)) {}  // NOLINT: implicit, as `return id;`
  // A failure. An ok Status here is a caller's bug: it becomes an Invalid one
  // rather than a Result with neither a value nor an error.
  Result(Status status)  // NOLINT: implicit, as `return Status::invalid(...);`
      : error(status.ok() ? "no value" : status.message()),
        code_(status.ok() ? StatusCode::Invalid : status.code()) {}

  bool ok() const { return value.has_value(); }
  Status status() const { return ok() ? Status() : Status(code_, error); }
  StatusCode code() const { return ok() ? StatusCode::Ok : code_; }
  // The value; only when ok().
  const T& operator*() const { return *value; }
  T& operator*() { return *value; }
  const T* operator->() const { return &*value; }

  // ---- Transitional (issue 12): the members of the Outcome<T> this replaces
  // (`*result.value`, `result.error`), used by schedd's submit handler until
  // it calls throw_status(result.status()). Read them, do not assign them.
  std::optional<T> value;
  std::string error;  // the message; "" when ok()

 private:
  StatusCode code_ = StatusCode::Ok;
};

}  // namespace sched
