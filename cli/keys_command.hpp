// `sched keys new | authorize | show`: the CURVE keys of schedd and the node
// agents (docs/security.md §3).
//
//   sched keys new NAME [--out DIR] [--force]   DIR/NAME.key (0600) and NAME.pub
//   sched keys authorize KEY NODES --file FILE  binds an agent key to node names
//   sched keys show FILE                        the public key of a .key or .pub
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

namespace sched::cli {

void add_keys_command(CLI::App& app);

// Adds (or, with `replace`, replaces) the line binding `key` (Z85 text, or a
// .pub/.key file) to `nodes` in the authorised-keys file `file`, creating it.
// Throws std::runtime_error when the key or the node list is not valid, or
// when the result would not parse (a node already bound to another key).
void authorize_key(const std::filesystem::path& file, const std::string& key,
                   const std::string& nodes, bool replace);

}  // namespace sched::cli
