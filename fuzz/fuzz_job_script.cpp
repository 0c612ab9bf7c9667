// Job scripts' directives (#SCHED / #SBATCH lines), as `sched submit` reads
// them: errors come back in the result, never as an exception.
#include <string_view>

#include "fuzz_target.hpp"
#include "job_script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sched::cli::parse_job_script(text);
  (void)sched::cli::submission_from_script(text, sched::cli::SubmitOptions{});
  return 0;
}
