// Which handler answers which message, one table per socket: a new message
// is one line here and its handler.
#include "handlers/handlers.hpp"
#include "handlers/route_table.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/negotiation_info.hpp"
#include "sched/proto/pmi_messages.hpp"
#include "sched/proto/pmix_messages.hpp"
#include "sched/proto/session.hpp"

namespace sched::daemon {

RouteTable client_routes() {
  namespace type = proto::type;
  RouteTable routes("client");
  routes.add(type::kSessionOpen, handlers::session_open)
      .add(type::kSubmit, handlers::submit)
      .add(type::kCancel, handlers::cancel)
      .add(type::kJobsQuery, handlers::jobs_query)
      .add(type::kJobShow, handlers::job_show)
      .add(type::kAcct, handlers::acct)
      .add(type::kJobHold, handlers::job_hold)
      .add(type::kJobRelease, handlers::job_release)
      .add(type::kJobRequeue, handlers::job_requeue)
      .add(type::kNodesQuery, handlers::nodes_query)
      .add(type::kNodeUpdate, handlers::node_update)
      .add(type::kPolicyInfo, handlers::policy_info)
      .add(type::kPolicyReload, handlers::policy_reload)
      .add(type::kCorridorSet, handlers::corridor_set)
      .add(type::kCorridorShow, handlers::corridor_show)
      .add(type::kStats, handlers::stats)
      .add(type::kStepRun, handlers::step_run)
      .add(type::kStepAttach, handlers::step_attach)
      // ---- issue 22
      .add(type::kPolicyCheck, handlers::policy_check)
      .add(type::kPolicySet, handlers::policy_set)
      .add(type::kPolicyHistory, handlers::policy_history)
      .add(type::kPolicyRollback, handlers::policy_rollback)
      .add(type::kPolicySnapshot, handlers::policy_snapshot)
      // ---- issue 19
      .add(type::kEventsReplay, handlers::events_replay)
      // ---- issue 17 item 1
      .add(type::kJobResize, handlers::job_resize)
      // ---- issue 20 item 1
      .add(type::kPartitionList, handlers::partition_list)
      .add(type::kPartitionUpdate, handlers::partition_update)
      // ---- issue 20 items 3, 5
      .add(type::kNegotiationInfo, handlers::negotiation_info);
  return routes;
}

RouteTable agent_routes() {
  namespace type = proto::type;
  RouteTable routes("agent");
  routes.add(type::kAgentRegister, handlers::agent_register)
      .add(type::kAgentHeartbeat, handlers::agent_heartbeat)
      .add(type::kTaskStarted, handlers::task_started)
      .add(type::kTaskExited, handlers::task_exited)
      .add(type::kPerfReport, handlers::perf_report)
      .add(type::kPowerReport, handlers::power_report)
      .add(type::kStepOutput, handlers::step_output)
      .add(type::kStepExited, handlers::step_exited)
      .add(type::kStepRunning, handlers::step_running)
      .add(type::kAdaptReady, handlers::adapt_ready)
      .add(type::kAdaptComplete, handlers::adapt_complete)
      .add(type::kAdaptFailed, handlers::adapt_failed)
      // ---- issue 16 item 2
      .add(type::kPmiFence, handlers::pmi_fence)
      .add(type::kPmiAbort, handlers::pmi_abort)
      .add(type::kPmixSpawn, handlers::pmix_spawn)
      .add(type::kPmixPublish, handlers::pmix_publish)
      .add(type::kPmixLookup, handlers::pmix_lookup)
      .add(type::kPmixConnect, handlers::pmix_connect)
      // ---- issue 17 item 1
      .add(type::kResizeRequest, handlers::resize_request);
  return routes;
}

}  // namespace sched::daemon
