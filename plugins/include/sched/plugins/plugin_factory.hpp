// What every plugin's sched_power_meter_create does around its meter's
// constructor, so that the C boundary is crossed by messages, not exceptions:
//
//   extern "C" SCHED_PLUGIN_EXPORT sched::plugins::PowerMeter* sched_power_meter_create(
//       int abi, const char* options, char* error, std::size_t error_size) {
//     return sched::plugins::create_meter<MyMeter>(abi, options, error, error_size);
//   }
//
// Meter is constructible from the options text and throws std::exception
// with a message when it cannot work.
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "sched/plugins/power_meter.hpp"

namespace sched::plugins {

// Copies as much of `text` as fits, always NUL-terminated; nothing when size is 0.
void write_error(char* error, std::size_t size, std::string_view text) noexcept;

template <class Meter>
PowerMeter* create_meter(int abi, const char* options, char* error,
                         std::size_t error_size) noexcept {
  if (abi != kPowerMeterAbi) {
    write_error(error, error_size,
                "plugin built for power meter ABI " + std::to_string(kPowerMeterAbi) +
                    ", the host uses " + std::to_string(abi));
    return nullptr;
  }
  try {
    return new Meter(std::string(options ? options : ""));
  } catch (const std::exception& e) {
    write_error(error, error_size, e.what());
  } catch (...) {
    write_error(error, error_size, "unknown error");
  }
  return nullptr;
}

}  // namespace sched::plugins
