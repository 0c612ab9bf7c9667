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

// Success is a null pointer: no allocation, ok() is one comparison.
// [[nodiscard]] on the class covers every function returning a Status (or a
// Result): an answer dropped by mistake is a warning; `(void)` says it is meant.
class [[nodiscard]] Status {
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
  Result(T v) : value_(std::move(v)) {}  // NOLINT: implicit, as `return id;`
  // A failure. An ok Status here is a caller's bug: it becomes an Invalid one
  // rather than a Result with neither a value nor an error.
  Result(Status status)  // NOLINT: implicit, as `return Status::invalid(...);`
      : status_(status.ok() ? Status::invalid("no value") : std::move(status)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  StatusCode code() const { return status_.code(); }
  // For people; empty when ok().
  const std::string& error() const { return status_.message(); }
  // The value; only when ok().
  const T& value() const { return *value_; }
  const T& operator*() const { return *value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace sched
