// Loading power meter plugins by name (docs/design.md §2): "rapl" is
// libsched_power_rapl.so, looked for in a list of folders.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sched/plugins/power_meter.hpp"

namespace sched::plugins {

// The meter `name` with its `options` (plugin_options.hpp). `name` is a plain
// name (letters, digits, '_', '-') looked for as libsched_power_<name>.so in
// search_dirs, first match wins; or, when it holds a '/', the plugin's path.
// The meter keeps its shared object loaded until it is destroyed. Throws
// std::runtime_error naming the file and the cause: not found (with the
// folders looked in), dlopen's or dlsym's message, or the plugin's own error.
std::unique_ptr<PowerMeter> load_power_meter(const std::string& name, const std::string& options,
                                             const std::vector<std::string>& search_dirs);

// The meter to use when the config names none: RAPL (with rapl_options, e.g.
// "root=DIR" for a fake powercap tree) when it opens, else the model. `why`,
// when given, says which and why: "RAPL unavailable (<load_power_meter's
// error>): using the model meter". Throws std::runtime_error when the model
// cannot be loaded either.
std::unique_ptr<PowerMeter> open_default_power_meter(const std::vector<std::string>& search_dirs,
                                                     const std::string& rapl_options,
                                                     std::string* why);

// Where plugins are looked for unless the config says otherwise:
// $SCHED_PLUGIN_DIR when set, then the installed prefix's lib/sched/plugins
// when this program is installed, then the build tree's plugins folder.
std::vector<std::string> default_plugin_dirs();

// "libsched_power_<name>.so".
std::string power_meter_file(const std::string& name);

}  // namespace sched::plugins
