// Durations and times as Slurm reads and prints them: the -t/--time formats of
// sbatch, squeue's TIME and TIME_LIMIT columns, sacct's Elapsed and its
// timestamps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sched::cli {

// Reads a time limit in seconds: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or
// UNLIMITED / INFINITE (any case) for no limit, which is 0 as in
// JobSpec::walltime. The leading field may be any size ("90" is 90 minutes);
// the fields after it must be below 60 (minutes, seconds) or 24 (hours after
// a day), so a slip like "1:75:00" is an error rather than a surprise.
// Nothing when the text is not a time.
std::optional<std::int64_t> parse_duration(std::string_view text);

// The accepted forms, for error messages.
inline constexpr std::string_view kDurationForms =
    "M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED";

// sbatch's --begin, as epoch seconds given the time `now` (epoch seconds;
// local time for the clock forms): now, now+N[seconds|minutes|hours|days|
// weeks] (seconds without a unit), HH:MM[:SS] (today, or tomorrow when that
// time has passed), midnight, noon, teatime (16:00), today, tomorrow,
// YYYY-MM-DD[THH:MM[:SS]]. Nothing when the text is none of these.
std::optional<double> parse_begin_time(std::string_view text, double now);

// The accepted forms, for error messages.
inline constexpr std::string_view kBeginForms =
    "now+N[seconds|minutes|hours|days|weeks], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], midnight, "
    "noon, teatime, today or tomorrow";

// squeue's TIME column: "M:SS", "H:MM:SS", "D-HH:MM:SS" (seconds rounded
// down); "N/A" when negative (unset).
std::string format_duration(double seconds);

// squeue's TIME_LIMIT column: format_duration, or "UNLIMITED" for 0 or less.
std::string format_time_limit(double seconds);

// sacct's Elapsed column: "HH:MM:SS" or "D-HH:MM:SS"; "N/A" when negative.
std::string format_elapsed(double seconds);

// sacct's Start/End: "2026-11-22T03:04:05" in local time; "N/A" when
// negative (unset, as Job::start_time = -1).
std::string format_timestamp(double epoch_seconds);

// sacct's ExitCode "code:signal" from Job::exit_status (an exit code >= 0 or
// minus the signal number).
std::string format_exit_code(int exit_status);

}  // namespace sched::cli
