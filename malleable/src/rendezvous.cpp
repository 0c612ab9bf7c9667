#include "rendezvous.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "failure.hpp"
#include "sched/malleable.h"

namespace sched::mall {
namespace {

// The endpoint in a file of this job and step; nothing for an absent,
// partial or stale file.
std::optional<std::string> read_entry(const std::filesystem::path& path, std::int64_t job,
                                      std::int64_t step) {
  std::ifstream in(path);
  std::int64_t file_job = -1;
  std::int64_t file_step = -1;
  std::string endpoint;
  if (!(in >> file_job >> file_step >> endpoint)) return std::nullopt;
  if (file_job != job || file_step != step) return std::nullopt;
  return endpoint;
}

}  // namespace

std::filesystem::path Rendezvous::file(int rank) const {
  return dir_ / ("rank-" + std::to_string(rank));
}

void Rendezvous::publish(int rank, const std::string& endpoint) const {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  // Readers poll the file: a rename makes it appear complete or not at all.
  const auto temporary =
      dir_ / (".rank-" + std::to_string(rank) + "." + std::to_string(::getpid()));
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << job_ << ' ' << step_ << ' ' << endpoint << '\n';
    if (!out.flush()) {
      throw Failure(SCHED_MALL_EENV, "cannot write " + temporary.string() +
                                         " (SCHED_MALL_RENDEZVOUS_DIR must be a writable folder)");
    }
  }
  std::filesystem::rename(temporary, file(rank), error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Failure(SCHED_MALL_EENV, "cannot write " + file(rank).string() + ": " + error.message());
  }
}

std::string Rendezvous::lookup(int rank, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    if (auto endpoint = read_entry(file(rank), job_, step_)) return *endpoint;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw Failure(SCHED_MALL_ENOPEER,
                    "rank " + std::to_string(rank) + " has not published its endpoint in " +
                        file(rank).string() + " within " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace sched::mall
