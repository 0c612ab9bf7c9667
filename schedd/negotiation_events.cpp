#include "negotiation_events.hpp"

#include "sched/proto/envelope.hpp"
#include "sched/proto/error.hpp"
#include "sched/proto/negotiation_messages.hpp"

namespace sched::daemon {
namespace {

namespace type = proto::type;

std::string cores_text(const std::vector<int>& cores) {
  std::string out;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(cores[i]);
  }
  return out;
}

std::string describe_offer(const proto::NegoOfferSet& offer) {
  int cores = 0;
  for (const auto& r : offer.resources) {
    for (const auto& s : r.sockets) cores += static_cast<int>(s.cores.size());
  }
  return std::to_string(cores) + " cores on " + std::to_string(offer.resources.size()) +
         " node(s)" + (offer.is_virtual ? ", virtual" : "");
}

}  // namespace

std::string describe_mapping(const std::vector<proto::NegoPlacement>& mapping) {
  if (mapping.empty()) return "no job";
  std::string out;
  for (const auto& p : mapping) {
    if (!out.empty()) out += "; ";
    out += "job " + std::to_string(p.job) + " on " + p.node + ":" + cores_text(p.cores);
  }
  return out;
}

std::vector<NegoEvent> NegoWatch::seen(const std::string& bytes, bool to_scheduler) {
  std::vector<NegoEvent> out;
  try {
    const proto::Envelope e = proto::decode(bytes.data(), bytes.size());
    if (e.is_reply() && e.ok == false) return out;  // a protocol error: counted, not a step
    const std::string& t = e.type;
    if (to_scheduler && t == type::kNegoOffer) {
      const auto body = e.body_as<proto::NegoOffer>();
      // A re-offer after a mapping says why the iHypervisor rejected it (§5.4).
      const std::string prefix = "mapping_rejected";
      if (body.reason.rfind(prefix, 0) == 0) {
        std::string why = body.reason.substr(prefix.size());
        if (why.rfind(": ", 0) == 0) why = why.substr(2);
        out.push_back({"nego.rejected", body.txn, body.attempt - 1, 0, "hypervisor", why,
                       "the iHypervisor rejected the mapping of attempt " +
                           std::to_string(body.attempt - 1)});
      }
      out.push_back(
          {"nego.offer", body.txn, body.attempt, 0, "", body.reason, describe_offer(body.offer)});
    } else if (!to_scheduler && t == type::kNegoOfferResponse) {
      const auto body = e.body_as<proto::NegoOfferResponse>();
      if (body.accepted) {
        out.push_back(
            {"nego.mapping", body.txn, body.attempt, 0, "", "", describe_mapping(body.mapping)});
      } else {
        out.push_back({"nego.rejected", body.txn, body.attempt, 0, "scheduler",
                       body.reason.value_or(""), "the iScheduler rejected the offer"});
      }
    } else if (t == type::kNegoEnd) {
      const auto body = e.body_as<proto::NegoEnd>();
      if (to_scheduler && body.outcome == proto::nego_outcome::kAgreed) {
        const std::string jobs = describe_mapping(body.mapping);
        accepted_[body.txn] = jobs;
        out.push_back({"nego.accepted", body.txn, 0, 0, "hypervisor", "", jobs});
      } else {
        out.push_back({"nego.not_agreed", body.txn, 0, 0, to_scheduler ? "hypervisor" : "scheduler",
                       body.outcome + (body.reason ? ": " + *body.reason : std::string()), ""});
      }
    } else if (!to_scheduler && t == type::kNegoEndResponse) {
      const auto body = e.body_as<proto::NegoEndResponse>();
      if (auto it = accepted_.find(body.txn); it != accepted_.end()) {
        out.push_back({"nego.agreed", body.txn, 0, 0, "", "", it->second});
        accepted_.erase(it);
      }
    } else if (!to_scheduler && t == type::kNegoUrgent) {
      const auto body = e.body_as<proto::NegoUrgent>();
      out.push_back(
          {"nego.urgent", 0, 0, body.job, "asked", "", std::to_string(body.cores) + " cores"});
    } else if (to_scheduler && t == type::kNegoUrgentResponse) {
      const auto body = e.body_as<proto::NegoUrgentResponse>();
      out.push_back({"nego.urgent", 0, 0, body.job, body.started ? "started" : "refused",
                     body.reason.value_or(""), describe_mapping(body.placement)});
    } else if (to_scheduler && t == type::kNegoStatus) {
      const auto body = e.body_as<proto::NegoStatus>();
      out.push_back({"nego.status", 0, 0, 0, "", "",
                     std::to_string(body.cores_busy) + "/" + std::to_string(body.cores_total) +
                         " cores busy, " + std::to_string(body.jobs.size()) + " job(s)"});
    }
  } catch (const proto::ProtoError&) {
    // An unreadable message is the session's to refuse; no event.
  }
  return out;
}

}  // namespace sched::daemon
