// `sched negotiation [-p NAME]` (issue 20 items 3, 5; docs/user-guide.md
// "Negotiated partitions"): each negotiated partition's iHypervisor, its
// peer, the transaction in flight and the negotiation's statistics.
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "sched/proto/negotiation_info.hpp"

namespace sched::cli {
namespace {

struct NegotiationArgs {
  bool json = false;
  std::string partition;
};

nlohmann::json status_json(const proto::NegoStatus& s) {
  return {{"time", s.time},
          {"cores_total", s.cores_total},
          {"cores_busy", s.cores_busy},
          {"utilisation", s.utilisation},
          {"throughput_per_hour", s.throughput_per_hour},
          {"jobs", s.jobs.size()}};
}

nlohmann::json info_json(const proto::NegotiationInfo& n) {
  nlohmann::json out = {{"partition", n.partition},
                        {"endpoint", n.endpoint},
                        {"scheduler", n.scheduler},
                        {"hypervisor_policy", n.hypervisor_policy},
                        {"scheduler_policy", n.scheduler_policy},
                        {"peer", n.peer},
                        {"phase", n.phase},
                        {"txn", n.txn},
                        {"attempt", n.attempt},
                        {"offer_cores", n.offer_cores},
                        {"max_attempts", n.max_attempts},
                        {"timeout_s", n.timeout_s},
                        {"status_interval_s", n.status_interval_s},
                        {"queued", n.queued},
                        {"starting", n.starting},
                        {"cores_total", n.cores_total},
                        {"cores_busy", n.cores_busy},
                        {"transactions", n.transactions},
                        {"agreed", n.agreed},
                        {"agreed_empty", n.agreed_empty},
                        {"not_agreed", n.not_agreed},
                        {"rejected_mappings", n.rejected_mappings},
                        {"rejected_offers", n.rejected_offers},
                        {"start_refusals", n.start_refusals},
                        {"mean_rounds", n.mean_rounds},
                        {"max_rounds", n.max_rounds},
                        {"policy_errors", n.policy_errors},
                        {"messages", n.messages}};
  if (n.last_policy_error) out["last_policy_error"] = *n.last_policy_error;
  if (n.last_status) out["last_status"] = status_json(*n.last_status);
  return out;
}

// As scontrol show prints a record: Key=Value, a few a line.
std::string render(const proto::NegotiationInfo& n) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  out << "Partition=" << n.partition << " Scheduler=" << n.scheduler << " Endpoint=" << n.endpoint
      << "\n";
  out << "   HypervisorPolicy=" << n.hypervisor_policy
      << " SchedulerPolicy=" << (n.scheduler_policy.empty() ? "-" : n.scheduler_policy) << "\n";
  out << "   Peer=" << n.peer << " MaxAttempts=" << n.max_attempts << " Timeout=" << n.timeout_s
      << "s StatusInterval=" << n.status_interval_s << "s\n";
  if (n.txn != 0) {
    out << "   InFlight=txn:" << n.txn << " Phase=" << n.phase << " Attempt=" << n.attempt
        << " OfferCores=" << n.offer_cores << "\n";
  } else {
    out << "   InFlight=none\n";
  }
  out << "   Cores=" << n.cores_busy << "/" << n.cores_total << " Queued=" << n.queued
      << " Starting=" << n.starting << "\n";
  out << "   Transactions=" << n.transactions << " Agreed=" << n.agreed
      << " AgreedEmpty=" << n.agreed_empty << " NotAgreed=" << n.not_agreed
      << " RejectedMappings=" << n.rejected_mappings << " RejectedOffers=" << n.rejected_offers
      << " StartRefusals=" << n.start_refusals << "\n";
  out << "   RoundsPerAgreement=" << n.mean_rounds << " MaxRounds=" << n.max_rounds
      << " PolicyErrors=" << n.policy_errors << "\n";
  if (n.last_policy_error) out << "   LastPolicyError=" << *n.last_policy_error << "\n";
  std::string messages;
  for (const auto& [type, count] : n.messages) {
    messages += (messages.empty() ? "" : " ") + type + ":" + std::to_string(count);
  }
  out << "   Messages=" << (messages.empty() ? std::string("none") : messages) << "\n";
  if (n.last_status) {
    out << "   LastStatus=cores:" << n.last_status->cores_busy << "/" << n.last_status->cores_total
        << " utilisation:" << n.last_status->utilisation << " jobs:" << n.last_status->jobs.size()
        << "\n";
  } else {
    out << "   LastStatus=none\n";
  }
  return out.str();
}

}  // namespace

void add_negotiation_command(CLI::App& app) {
  auto args = std::make_shared<NegotiationArgs>();
  CLI::App* cmd = app.add_subcommand(
      "negotiation",
      "The negotiated partitions: their iHypervisor's peer, the transaction in flight, the "
      "negotiation's statistics");
  cmd->add_flag("--json", args->json, "Print {\"partitions\": [...]} as JSON");
  cmd->add_option("-p,--partition", args->partition, "This partition alone");
  cmd->callback([args] {
    run_command([&] {
      proto::NegotiationQuery query;
      if (!args->partition.empty()) query.partition = args->partition;
      const auto list = client().call<proto::NegotiationList>(proto::type::kNegotiationInfo, query);
      if (args->json) {
        nlohmann::json out = {{"partitions", nlohmann::json::array()}};
        for (const auto& n : list.partitions) out["partitions"].push_back(info_json(n));
        std::cout << out.dump(2) << "\n";
        return;
      }
      if (list.partitions.empty()) {
        std::cout << "No partition is negotiated.\n";
        return;
      }
      for (std::size_t i = 0; i < list.partitions.size(); ++i) {
        if (i > 0) std::cout << "\n";
        std::cout << render(list.partitions[i]);
      }
    });
  });
}

}  // namespace sched::cli
