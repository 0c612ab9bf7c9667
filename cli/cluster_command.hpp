// `sched cluster up --nodes N | down | status`: a local cluster on this
// machine — schedd plus N node agents as virtual nodes, and a munged of
// its own when the machine runs none — started in the background, with its
// journal, logs and a cluster.json (pids, endpoints, munged socket) in the
// state folder.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace sched::cli {

void add_cluster_command(CLI::App& app);

// The client endpoint of a local cluster started with `cluster up` in the
// default state folder, if one is up.
std::optional<std::string> local_cluster_endpoint();
// The munged socket of that cluster when `endpoint` is its endpoint and it
// runs a munged of its own.
std::optional<std::string> local_cluster_munge_socket(const std::string& endpoint);

}  // namespace sched::cli
