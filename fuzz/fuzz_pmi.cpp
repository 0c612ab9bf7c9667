// What a job's rank writes on its PMI connection (untrusted: any program of
// the job's user), fed to a step's PMI server in pieces: every input gets
// answers or an error line, never an exception, a crash or unbounded memory.
#include <string_view>

#include "fuzz_target.hpp"
#include "sched/pmi/server.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sched::pmi::StepInfo info;
  info.kvsname = "sched-1.1";
  info.size = 2;
  info.local_ranks = {0, 1};
  sched::pmi::NodeServer server(info);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The first byte picks the rank and the split point, so both ranks and
  // lines cut across reads are reached.
  const std::size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  server.receive(0, text.substr(0, cut));
  server.receive(1, text.substr(cut));
  server.receive(0, text.substr(cut));
  (void)server.take_output(0);
  (void)server.take_output(1);
  if (auto entries = server.take_fence()) server.fence_done(*entries);
  return 0;
}
