// Policy files written for one test, in a fresh temporary folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.hpp"

namespace sched::invasive::testing {

inline std::string bundled(const std::string& name) {
  return std::string(SCHED_SOURCE_POLICY_DIR) + "/negotiation/" + name;
}

class TempPolicies {
 public:
  TempPolicies() {
    dir_ = std::filesystem::temp_directory_path() /
           ("sched_invasive_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(dir_);
  }
  ~TempPolicies() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path dir_;
};

}  // namespace sched::invasive::testing
