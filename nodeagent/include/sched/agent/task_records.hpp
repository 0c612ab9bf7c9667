// The agent's process table on disk (fencing, docs/protocol.md §5): one line
// per running task — job, task, the session it leads and its leader's start
// time — rewritten atomically (temporary file, fsync, rename) as tasks start
// and end. An agent that starts kills whatever its predecessor's table still
// names before it registers, so that no job process outlives its agent
// unnoticed. The start time makes a reused pid harmless: a session whose
// leader's pid now names a younger process is gone already.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sched/agent/types.hpp"

namespace sched::agent {

struct TaskRecord {
  JobId job = 0;
  TaskId task = 0;
  pid_t session = 0;                  // the task's process: leader of its session and group
  unsigned long long start_time = 0;  // of that process, clock ticks after boot (/proc/<pid>/stat)
  bool operator==(const TaskRecord&) const = default;
};

// The record of a task whose process is `pid` (its start time read now);
// start_time 0 when the process is already gone.
TaskRecord task_record(JobId job, TaskId task, pid_t pid);

// Throws std::runtime_error when the file cannot be written; the old file
// then stays whole.
void write_task_records(const std::string& path, const std::vector<TaskRecord>& records);
// A missing file is an empty table; malformed lines are skipped.
std::vector<TaskRecord> read_task_records(const std::string& path);

// The living processes of what the records name: each task's session and
// process group and their descendants. Nothing for a record whose leader
// pid names a process with another start time.
std::vector<pid_t> recorded_processes(const std::vector<TaskRecord>& records);

// SIGKILLs every process recorded_processes() finds, again until none is
// left or `timeout` has passed; returns the records still alive (empty: the
// node is clean).
std::vector<TaskRecord> kill_recorded(const std::vector<TaskRecord>& records,
                                      std::chrono::duration<double> timeout);

}  // namespace sched::agent
