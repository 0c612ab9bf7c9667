// Native (TOML) workloads: any error is a WorkloadError naming file and line.
#include <string_view>

#include "fuzz_target.hpp"
#include "sched/sim/native_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)sched::sim::parse_native(text, "fuzz.toml");
  } catch (const sched::sim::WorkloadError&) {
  }
  return 0;
}
