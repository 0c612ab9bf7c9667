// schedd's authorised-keys file of node agents (docs/security.md §3):
// which CURVE public keys may connect to the agent socket, and which node
// names each may register as. One key a line:
//
//   # comment
//   <public-key-z85>  <nodes>  [# comment]
//
// (# is a Z85 character too: a line whose first word is a key is a key line.)
// <nodes> is a comma-separated list of names, each with at most one range in
// brackets: n1 | n[1-16] | gpu[01-04,09],login1. A key may be listed once;
// a node name may belong to one key only.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sched::proto {

class AuthorizedAgents {
 public:
  // Reads the file's text; `file` names it in errors. Throws
  // std::runtime_error "FILE:LINE: what is wrong" at the first bad line.
  static AuthorizedAgents parse(std::string_view text, const std::string& file);
  // Reads a file. Throws std::runtime_error naming it.
  static AuthorizedAgents load(const std::filesystem::path& path);

  // Whether the key may connect at all.
  bool known(const std::string& key) const { return nodes_.count(key) > 0; }
  // Whether the key may speak for `node`.
  bool allows(const std::string& key, const std::string& node) const;
  // The nodes of a key as the file wrote them ("" for an unknown key).
  std::string nodes_text(const std::string& key) const;
  std::size_t size() const { return nodes_.size(); }

 private:
  std::map<std::string, std::set<std::string>> nodes_;  // key → node names
  std::map<std::string, std::string> texts_;            // key → <nodes> as written
};

// Expands a node list (n[1-3],login → n1 n2 n3 login); a range keeps the
// width of its zero-padded bounds (n[01-03] → n01 n02 n03). Throws
// std::runtime_error saying what is wrong.
std::set<std::string> expand_node_list(std::string_view list);

}  // namespace sched::proto
