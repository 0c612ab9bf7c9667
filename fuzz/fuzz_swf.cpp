// SWF traces: a malformed line is a WorkloadError naming it.
#include <sstream>
#include <string>

#include "fuzz_target.hpp"
#include "sched/sim/swf_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  sched::sim::SwfOptions options;
  options.max_jobs = 1000;  // bounds the work per input, as a prefix replay does
  try {
    (void)sched::sim::parse_swf(in, "fuzz.swf", options);
  } catch (const sched::sim::WorkloadError&) {
  }
  return 0;
}
