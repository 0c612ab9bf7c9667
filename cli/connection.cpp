#include "connection.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cluster_command.hpp"
#include "program_name.hpp"
#include "sched/auth/credential.hpp"
#include "sched/proto/curve.hpp"

namespace sched::cli {
namespace {

std::string endpoint_option;
std::string server_key_option;
double timeout_s = 10;
constexpr const char* kSystemServerKey = "/etc/sched/schedd.pub";

}  // namespace

void add_connection_options(CLI::App& app) {
  app.add_option("--endpoint", endpoint_option,
                 "schedd's client endpoint (default: $SCHED_ENDPOINT, else " +
                     std::string(proto::kDefaultClientEndpoint) + ")");
  app.add_option("--server-key", server_key_option,
                 "schedd's public key file, for an encrypted link (default: "
                 "$SCHED_SERVER_KEY_FILE; off loopback, else " +
                     std::string(kSystemServerKey) + ")");
  app.add_option("--timeout", timeout_s, "Seconds to wait for schedd's answer")
      ->check(positive_number())
      ->capture_default_str();
}

namespace {

CLI::Validator number_check(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
          return "'" + text + "' is not a number";
        }
        if (zero_ok ? value < 0 : value <= 0) {
          return "'" + text + "' must be " + (zero_ok ? "0 or more" : "above 0");
        }
        return "";
      },
      zero_ok ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace

CLI::Validator positive_number() { return number_check(false); }
CLI::Validator non_negative_number() { return number_check(true); }

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

std::string server_public_key(const std::string& endpoint) {
  std::string file = server_key_option;
  if (const char* value = std::getenv("SCHED_SERVER_KEY_FILE"); file.empty() && value && *value) {
    file = value;
  }
  const bool loopback = proto::curve::is_loopback_endpoint(endpoint);
  if (file.empty() && !loopback && std::filesystem::exists(kSystemServerKey)) {
    file = kSystemServerKey;
  }
  if (file.empty()) {
    if (loopback) return {};
    throw std::runtime_error("the link to " + endpoint +
                             " is encrypted: give schedd's public key with --server-key or "
                             "SCHED_SERVER_KEY_FILE (or install it as " +
                             std::string(kSystemServerKey) + ")");
  }
  return proto::curve::read_public_key_file(file);
}

void secure_socket(zmq::socket_t& socket, const std::string& bound) {
  if (proto::curve::is_loopback_endpoint(bound)) return;
  proto::curve::make_client(socket, proto::curve::generate(), server_public_key(bound));
}

proto::Client& client() {
  static zmq::context_t context(1);
  static std::unique_ptr<proto::Client> connection;
  if (!connection) {
    const std::string endpoint = client_endpoint();
    connection = std::make_unique<proto::Client>(
        context, endpoint, std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)),
        auth::munge_signer(munge_socket()), server_public_key(endpoint));
  }
  return *connection;
}

void run_command(const std::function<void()>& body) {
  try {
    body();
  } catch (const proto::ProtoError& e) {
    std::cerr << program_name() << ": " << e.what() << "\n";
    std::exit(1);
  } catch (const proto::TransportError& e) {
    std::cerr << program_name() << ": " << e.what() << "\n";
    std::exit(2);
  } catch (const std::exception& e) {
    std::cerr << program_name() << ": " << e.what() << "\n";
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
// ---- issue 22
nlohmann::json to_json(const proto::PolicyCheckReply& check) { return body_json(check); }
nlohmann::json to_json(const proto::PolicyHistoryReply& history) { return body_json(history); }

}  // namespace sched::cli
