// What the PMIx servers of a job's nodes share through schedd for
// MPI_Comm_spawn (issue 16 item 2, docs/protocol.md §6): the keys its ranks
// publish, lookups waiting for keys, and PMIx_Connect gathered across the
// nodes of the steps it joins. One purpose: keeping that state. The
// handlers (handlers/pmix.cpp) check and send.
//
// No timeout: a lookup with wait lasts until the key comes or the job ends
// (Open MPI gives its own); a connect cannot hang on a dead rank, whose end
// fails its step, whose connects then fail (drop_step).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sched/job.hpp"

namespace sched::daemon {

class PmixExchange {
 public:
  struct Answer {  // a lookup that can be answered
    std::string node;
    std::uint64_t id = 0;
    std::map<std::string, std::string> entries;
  };

  // Keys published in the job (a key published again takes the new value);
  // the lookups they complete.
  std::vector<Answer> publish(JobId job, const std::map<std::string, std::string>& entries);
  // A lookup: answered now when every key is known or `wait` is false
  // (with the keys known), else kept until publish completes it.
  std::optional<Answer> lookup(JobId job, const std::string& node, std::uint64_t id,
                               const std::vector<std::string>& keys, bool wait);

  // `node`'s part of connect `id`, among `nodes` (who must all take part),
  // joining `steps`. Returns every node's entries when it was the last.
  // Throws std::invalid_argument when `node` is not one of `nodes` or came
  // already.
  std::optional<std::map<std::string, std::string>> connect(
      JobId job, const std::string& id, const std::set<std::int64_t>& steps,
      const std::set<std::string>& nodes, const std::string& node,
      const std::map<std::string, std::string>& entries);
  // The step ended or failed: connects that join it are dropped; their ids
  // and the nodes that came, who are waiting for an answer.
  std::vector<std::pair<std::string, std::set<std::string>>> drop_step(JobId job,
                                                                       std::int64_t step);
  // The job has no step left: its keys and waiting lookups go.
  void drop_job(JobId job);

  std::size_t waiting() const;  // lookups and connects open (tests, stats)

 private:
  struct Lookup {
    std::string node;
    std::uint64_t id = 0;
    std::vector<std::string> keys;
  };
  struct Connect {
    std::set<std::int64_t> steps;
    std::set<std::string> arrived;
    std::map<std::string, std::string> entries;
  };
  std::map<JobId, std::map<std::string, std::string>> published_;
  std::map<JobId, std::vector<Lookup>> lookups_;
  std::map<std::pair<JobId, std::string>, Connect> connects_;
};

}  // namespace sched::daemon
