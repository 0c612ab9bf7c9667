// A value kept out of line: the job record's fields that most jobs never set
// (issue 15) live in boxes of 8 bytes, allocated only once written, so that
// 100,000 waiting jobs do not each carry room for them.
#pragma once

#include <memory>

namespace sched {

// Value semantics: a copy copies the value (or stays empty). Reading an empty
// box gives a default-constructed T; `edit()` allocates it first. T needs a
// default constructor and, for `reset_if_default`, operator==.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  const T& operator*() const { return value_ ? *value_ : default_value(); }
  const T* operator->() const { return &**this; }

  // The value to write, allocated (default) if the box was empty.
  T& edit() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }

  // Whether anything was written (a written default counts until reset).
  bool has_value() const { return value_ != nullptr; }
  void reset() { value_.reset(); }
  // Frees the value when it equals the default: readers see no difference,
  // and a decoder that writes every field leaves no allocation behind.
  void reset_if_default() {
    if (value_ && *value_ == default_value()) value_.reset();
  }

  // Equal when the values read are equal (empty equals a written default).
  friend bool operator==(const Boxed& a, const Boxed& b) { return *a == *b; }

 private:
  static const T& default_value() {
    static const T value{};
    return value;
  }

  std::unique_ptr<T> value_;
};

}  // namespace sched
