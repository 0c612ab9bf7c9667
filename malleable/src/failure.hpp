// An expected failure inside the library, carrying the SCHED_MALL_E* code the
// C boundary (c_api.cpp) returns and a message for people.
#pragma once

#include <stdexcept>
#include <string>

namespace sched::mall {

class Failure : public std::runtime_error {
 public:
  Failure(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace sched::mall
