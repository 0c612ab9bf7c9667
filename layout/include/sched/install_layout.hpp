// Where an installed sched keeps its files (docs/admin.md "Installing"),
// found from the running program's own path: a tree installed under any
// prefix (`cmake --install --prefix P`, DESTDIR staging, the Debian package)
// finds its policies and plugins without being told. A program run from the
// build tree is not installed, and its callers fall back to the build tree.
#pragma once

#include <optional>
#include <string>

namespace sched::layout {

// The prefix the running program is installed under: the folder above its
// own, when its own is the prefix's bin or sbin and the prefix holds
// share/sched.
std::optional<std::string> installed_prefix();
// The same for a given program path (the test's way in).
std::optional<std::string> installed_prefix_of(const std::string& program);

// <prefix>/share/sched/policies: the pristine shipped policies.
std::optional<std::string> installed_policy_dir();
// The policy folder a program uses by default: $SCHED_POLICY_DIR when set,
// else the installed one, else `fallback` (the engine's default_policy_dir():
// the source tree's, for a build tree).
std::string policy_dir_or(const std::string& fallback);
// <prefix>/<libdir>/sched/plugins: the power meter plugins.
std::optional<std::string> installed_plugin_dir();

}  // namespace sched::layout
