#include "event_wire.hpp"

#include "sched/convert/wire_convert.hpp"

namespace sched::daemon {

bool is_job_event(const Event& event) {
  return event.job != 0 && event.type != EventType::AuthDenied;
}

std::string partition_label(const Job* job, bool partitioned) {
  return partitioned && job && !job->spec.partition.empty() ? job->spec.partition
                                                            : kDefaultPartition;
}

proto::EventMsg published_event(const Event& event, const Job* job, bool partitioned) {
  proto::EventMsg msg = convert::event_msg(event);
  if (is_job_event(event)) {
    msg.partition = partition_label(job, partitioned);
    if (job) {
      msg.name = job->spec.name;
      msg.user = job->spec.user;
    }
    const bool ended = event.type == EventType::JobCompleted ||
                       event.type == EventType::JobFailed ||
                       event.type == EventType::JobCancelled || event.type == EventType::JobTimeout;
    if (ended && job && is_terminal(job->state)) {
      msg.exit_code = job->exit_status;
      if (!job->run->end_reason.empty()) msg.reason = job->run->end_reason;
    }
  }
  if ((event.type == EventType::NodeUp || event.type == EventType::NodeDown ||
       event.type == EventType::NodeDrain) &&
      !event.message.empty()) {
    msg.reason = event.message;
  }
  return msg;
}

}  // namespace sched::daemon
