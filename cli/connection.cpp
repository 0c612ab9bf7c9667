#include "connection.hpp"

#include <cstdlib>
#include <iostream>

#include "cluster_command.hpp"
#include "sched/auth/credential.hpp"

namespace sched::cli {
namespace {

std::string endpoint_option;
double timeout_s = 10;

}  // namespace

void add_connection_options(CLI::App& app) {
  app.add_option("--endpoint", endpoint_option,
                 "schedd's client endpoint (default: $SCHED_ENDPOINT, else " +
                     std::string(proto::kDefaultClientEndpoint) + ")");
  app.add_option("--timeout", timeout_s, "Seconds to wait for schedd's answer")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

std::string client_endpoint() {
  if (!endpoint_option.empty()) return endpoint_option;
  for (const char* name : {"SCHED_ENDPOINT", "SCHED_CLUSTER_ENDPOINT"}) {
    if (const char* value = std::getenv(name); value && *value) return value;
  }
  if (auto local = local_cluster_endpoint()) return *local;
  return std::string(proto::kDefaultClientEndpoint);
}

std::string munge_socket() {
  if (const char* socket = std::getenv("SCHED_MUNGE_SOCKET"); socket && *socket) return socket;
  if (auto local = local_cluster_munge_socket(client_endpoint())) return *local;
  return "";
}

proto::Client& client() {
  static zmq::context_t context(1);
  static std::unique_ptr<proto::Client> connection;
  if (!connection) {
    connection = std::make_unique<proto::Client>(
        context, client_endpoint(), std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)),
        auth::munge_signer(munge_socket()));
  }
  return *connection;
}

void run_command(const std::function<void()>& body) {
  try {
    body();
  } catch (const proto::ProtoError& e) {
    std::cerr << "sched: " << e.what() << "\n";
    std::exit(1);
  } catch (const proto::TransportError& e) {
    std::cerr << "sched: " << e.what() << "\n";
    std::exit(2);
  } catch (const std::exception& e) {
    std::cerr << "sched: " << e.what() << "\n";
    std::exit(1);
  }
}

namespace {

// Wire bodies list their fields once; the same list gives their JSON.
struct JsonWriter {
  nlohmann::json& out;
  template <class T>
  void operator()(const char* key, const T& value) {
    if constexpr (proto::detail::is_optional<T>::value) {
      if (value) out[key] = convert(*value);
    } else {
      out[key] = convert(value);
    }
  }
  template <class T>
  static nlohmann::json convert(const T& value) {
    if constexpr (proto::detail::HasFields<T>) {
      nlohmann::json inner = nlohmann::json::object();
      JsonWriter writer{inner};
      const_cast<T&>(value).fields(writer);
      return inner;
    } else if constexpr (proto::detail::is_vector<T>::value) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : value) list.push_back(convert(item));
      return list;
    } else {
      return nlohmann::json(value);
    }
  }
};

template <class T>
nlohmann::json body_json(const T& body) {
  return JsonWriter::convert(body);
}

}  // namespace

nlohmann::json to_json(const proto::JobInfo& job) { return body_json(job); }
nlohmann::json to_json(const proto::NodeInfo& node) { return body_json(node); }
nlohmann::json to_json(const proto::EventMsg& event) { return body_json(event); }
nlohmann::json to_json(const proto::StatsReply& stats) { return body_json(stats); }
nlohmann::json to_json(const proto::PolicyInfoReply& info) { return body_json(info); }

}  // namespace sched::cli
