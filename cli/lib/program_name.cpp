#include "program_name.hpp"

namespace sched::cli {
namespace {

std::string& name() {
  static std::string value = "sched";
  return value;
}

}  // namespace

const std::string& program_name() { return name(); }
void set_program_name(std::string value) { name() = std::move(value); }

}  // namespace sched::cli
