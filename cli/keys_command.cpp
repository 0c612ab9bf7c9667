#include "keys_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "connection.hpp"
#include "sched/proto/authorized_keys.hpp"
#include "sched/proto/curve.hpp"

namespace sched::cli {
namespace fs = std::filesystem;
namespace curve = proto::curve;
namespace {

// The public key of a .pub or .key file, or a key given as text. A file
// comes first: a path of 40 characters is valid Z85 text too.
std::string public_key_of(const std::string& given) {
  if (fs::exists(given)) {
    if (fs::path(given).extension() == ".key") return curve::read_secret_key_file(given).public_key;
    return curve::read_public_key_file(given);
  }
  if (curve::is_key(given)) return given;
  throw std::runtime_error("'" + given + "' is neither a CURVE public key nor a key file");
}

}  // namespace

void authorize_key(const fs::path& file, const std::string& key, const std::string& nodes,
                   bool replace) {
  const std::string public_key = public_key_of(key);
  proto::expand_node_list(nodes);  // a clear error before anything changes
  std::string kept;
  if (std::ifstream in(file); in) {
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string first;
      if (words >> first && first == public_key) {
        if (!replace) {
          throw std::runtime_error(file.string() + ": the key is listed already (--replace)");
        }
        continue;
      }
      kept += line + "\n";
    }
  }
  const std::string text = kept + public_key + " " + nodes + "\n";
  proto::AuthorizedAgents::parse(text, file.string());  // e.g. a node bound twice
  // Whole or not at all: schedd may read the file at any moment.
  const fs::path temporary = file.string() + ".new";
  std::ofstream(temporary) << text;
  fs::rename(temporary, file);
}

void add_keys_command(CLI::App& app) {
  CLI::App* keys = app.add_subcommand("keys", "CURVE keys of schedd and the node agents");
  keys->require_subcommand(1);

  struct NewArgs {
    std::string name;
    std::string out = ".";
    bool force = false;
  };
  auto made = std::make_shared<NewArgs>();
  CLI::App* new_cmd = keys->add_subcommand("new", "Make a key pair: DIR/NAME.key and DIR/NAME.pub");
  new_cmd->add_option("name", made->name, "schedd, or the node's name")->required();
  new_cmd->add_option("-o,--out", made->out, "Folder of the key files")->capture_default_str();
  new_cmd->add_flag("--force", made->force, "Replace a key pair that exists");
  new_cmd->callback([made] {
    run_command([&] {
      const fs::path secret = fs::path(made->out) / (made->name + ".key");
      if (fs::exists(secret) && !made->force) {
        throw std::runtime_error(secret.string() + " exists (--force replaces it)");
      }
      const auto pair = curve::write_key_pair(made->out, made->name, true);
      std::cout << pair.public_key << "\n";
      std::cerr << "wrote " << secret.string() << " (secret, mode 0600) and "
                << (fs::path(made->out) / (made->name + ".pub")).string() << "\n";
    });
  });

  struct AuthorizeArgs {
    std::string key;
    std::string nodes;
    std::string file;
    bool replace = false;
  };
  auto authorize = std::make_shared<AuthorizeArgs>();
  CLI::App* authorize_cmd =
      keys->add_subcommand("authorize", "Let an agent key register as the given node names");
  authorize_cmd->add_option("key", authorize->key, "A public key, or a .pub or .key file")
      ->required();
  authorize_cmd->add_option("nodes", authorize->nodes, "Node names: n1 | n[1-16] | a,b")
      ->required();
  authorize_cmd->add_option("-f,--file", authorize->file, "schedd's authorized_agents file")
      ->required();
  authorize_cmd->add_flag("--replace", authorize->replace, "Replace the key's line if listed");
  authorize_cmd->callback([authorize] {
    run_command([&] {
      authorize_key(authorize->file, authorize->key, authorize->nodes, authorize->replace);
      std::cout << "authorised as " << authorize->nodes << " in " << authorize->file
                << " (schedd reads it again within a second)\n";
    });
  });

  auto shown = std::make_shared<std::string>();
  CLI::App* show_cmd = keys->add_subcommand("show", "Print the public key of a .key or .pub file");
  show_cmd->add_option("file", *shown, "A key file")->required();
  show_cmd->callback([shown] { run_command([&] { std::cout << public_key_of(*shown) << "\n"; }); });
}

}  // namespace sched::cli
