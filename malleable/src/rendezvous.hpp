// Finding the step's peers through a folder they all see
// ($SCHED_MALL_RENDEZVOUS_DIR), while the agent cannot tell them yet: rank R
// writes "<job> <step> <endpoint>" to <dir>/rank-<R>; a file of another job
// or step is left over from an earlier run and ignored.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

namespace sched::mall {

class Rendezvous {
 public:
  Rendezvous(std::filesystem::path dir, std::int64_t job, std::int64_t step)
      : dir_(std::move(dir)), job_(job), step_(step) {}

  // Writes this rank's file whole (through a rename), creating the folder
  // when needed. Throws Failure(SCHED_MALL_EENV) when it cannot.
  void publish(int rank, const std::string& endpoint) const;

  // Rank R's endpoint, waiting up to `timeout` for its file. Throws
  // Failure(SCHED_MALL_ENOPEER) when none of this step appears in time.
  std::string lookup(int rank, std::chrono::milliseconds timeout) const;

 private:
  std::filesystem::path file(int rank) const;

  std::filesystem::path dir_;
  std::int64_t job_;
  std::int64_t step_;
};

}  // namespace sched::mall
