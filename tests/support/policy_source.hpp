// A small Lua policy of a test's own, as the text of its file.
#pragma once

#include <string>

namespace sched::luatest {

// A policy named `name` that starts every job that fits; `body` is line 3 of
// the file and runs first in each pass, so that a failure it causes names
// that line.
inline std::string policy(const std::string& name, const std::string& body = "") {
  return "local P = { name = '" + name +
         "', api = 1 }\n"              // line 1
         "function P.schedule(ctx)\n"  // line 2
         "  " +
         body +
         "\n"  // line 3
         "  for _, job in ipairs(ctx.pending) do\n"
         "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
         "  end\n"
         "end\n"
         "return P\n";
}

}  // namespace sched::luatest
