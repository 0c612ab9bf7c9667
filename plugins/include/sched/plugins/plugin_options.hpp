// A plugin's options: the text after the plugin's name in the config,
// "key=value,key=value" (spaces around keys and values are dropped; a value
// cannot hold a comma).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sched::plugins {

using PluginOptions = std::map<std::string, std::string>;

// Throws std::invalid_argument naming the fault: an item without '=', an
// empty key, a key given twice, or a key not in `known` (so that a typo in
// the config is an error, not a silently ignored setting).
PluginOptions parse_plugin_options(std::string_view text, const std::vector<std::string>& known);

// The option as a finite number, or `fallback` when absent. Throws
// std::invalid_argument when the value is not a number.
double option_number(const PluginOptions& options, const std::string& key, double fallback);

}  // namespace sched::plugins
