// `sched corridor show|set|clear`: the power corridor the cluster is held in
// (watts); 0, 0 means none.
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>

#include "admin_commands.hpp"
#include "connection.hpp"

namespace sched::cli {
namespace {

// Whole watts without a fraction, otherwise one decimal: no "1.5e+06".
std::string watts(double w) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(w == std::floor(w) ? 0 : 1);
  out << w << " W";
  return out.str();
}

void set_corridor(double lower, double upper) {
  client().call<proto::Empty>(proto::type::kCorridorSet, proto::Corridor{lower, upper, {}});
}

struct CorridorArgs {
  bool json = false;
  double lower = 0;
  double upper = 0;
};

}  // namespace

void add_corridor_command(CLI::App& app) {
  auto args = std::make_shared<CorridorArgs>();
  CLI::App* corridor = app.add_subcommand("corridor", "Show or set the power corridor");
  corridor->require_subcommand(1);

  CLI::App* show = corridor->add_subcommand("show", "Lower and upper bound, and the power now");
  show->add_flag("--json", args->json, "Print JSON");
  show->callback([args] {
    run_command([&] {
      const auto c = client().call<proto::Corridor>(proto::type::kCorridorShow, proto::Empty{});
      if (args->json) {
        nlohmann::json out = {{"lower_w", c.lower_w}, {"upper_w", c.upper_w}};
        if (c.current_w) out["current_w"] = *c.current_w;
        std::cout << out.dump(2) << "\n";
        return;
      }
      if (c.lower_w == 0 && c.upper_w == 0) {
        std::cout << "Corridor:  no corridor\n";
      } else {
        std::cout << "Lower:     " << watts(c.lower_w) << "\n"
                  << "Upper:     " << watts(c.upper_w) << "\n";
      }
      std::cout << "Current:   " << (c.current_w ? watts(*c.current_w) : "unknown") << "\n";
    });
  });

  CLI::App* set = corridor->add_subcommand("set", "Hold the cluster's power in [LOWER, UPPER]");
  set->add_option("LOWER", args->lower, "Watts")->required();
  set->add_option("UPPER", args->upper, "Watts")->required();
  set->callback([args] { run_command([&] { set_corridor(args->lower, args->upper); }); });

  corridor->add_subcommand("clear", "No corridor (the same as set 0 0)")->callback([] {
    run_command([] { set_corridor(0, 0); });
  });
}

}  // namespace sched::cli
