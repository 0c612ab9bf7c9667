#include "sched/plugins/loader.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "sched/install_layout.hpp"

namespace sched::plugins {
namespace {

constexpr const char* kFactorySymbol = "sched_power_meter_create";
using Factory = decltype(&sched_power_meter_create);

std::string dl_message() {
  const char* text = dlerror();
  return text ? text : "unknown error";
}

// Owns a dlopen handle.
class Library {
 public:
  explicit Library(void* handle) : handle_(handle) {}
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() { dlclose(handle_); }
  void* handle() const { return handle_; }

 private:
  void* handle_;
};

// The plugin's meter with its shared object: the members go in reverse order,
// so the meter's code is gone only after the meter is.
class LoadedMeter final : public PowerMeter {
 public:
  LoadedMeter(std::unique_ptr<Library> library, std::unique_ptr<PowerMeter> meter)
      : library_(std::move(library)), meter_(std::move(meter)) {}
  std::string name() const override { return meter_->name(); }
  std::optional<PowerSample> sample(const PowerContext& ctx, SteadyTime now) noexcept override {
    return meter_->sample(ctx, now);
  }
  std::string last_error() const override { return meter_->last_error(); }

 private:
  std::unique_ptr<Library> library_;
  std::unique_ptr<PowerMeter> meter_;
};

bool plain_name(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The plugin's path: `name` itself when it is one, else the first match in dirs.
std::string find_plugin(const std::string& name, const std::vector<std::string>& dirs) {
  if (name.find('/') != std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::exists(name, ec)) {
      throw std::runtime_error("power meter plugin " + name + ": no such file");
    }
    return name;
  }
  if (!plain_name(name)) {
    throw std::runtime_error("power meter name '" + name +
                             "' is neither a plain name (letters, digits, '_', '-') nor a path");
  }
  const std::string file = power_meter_file(name);
  std::string looked;
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    const std::string path = dir + "/" + file;
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return path;
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  throw std::runtime_error("power meter plugin '" + name + "' not found: no " + file + " in " +
                           (looked.empty() ? "(no plugin folders given)" : looked));
}

}  // namespace

std::string power_meter_file(const std::string& name) { return "libsched_power_" + name + ".so"; }

std::unique_ptr<PowerMeter> load_power_meter(const std::string& name, const std::string& options,
                                             const std::vector<std::string>& search_dirs) {
  const std::string path = find_plugin(name, search_dirs);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    throw std::runtime_error("power meter plugin " + path + " cannot be loaded: " + dl_message());
  }
  auto library = std::make_unique<Library>(handle);

  dlerror();  // a null symbol is an error only if dlerror() says so
  void* symbol = dlsym(library->handle(), kFactorySymbol);
  if (!symbol) {
    throw std::runtime_error("power meter plugin " + path + " has no " + kFactorySymbol + ": " +
                             dl_message());
  }
  const auto create = reinterpret_cast<Factory>(symbol);

  std::array<char, 1024> error{};
  std::unique_ptr<PowerMeter> meter(
      create(kPowerMeterAbi, options.c_str(), error.data(), error.size()));
  if (!meter) {
    throw std::runtime_error("power meter plugin " + path +
                             " failed to start: " + (error[0] ? error.data() : "no reason given"));
  }
  return std::make_unique<LoadedMeter>(std::move(library), std::move(meter));
}

std::unique_ptr<PowerMeter> open_default_power_meter(const std::vector<std::string>& search_dirs,
                                                     const std::string& rapl_options,
                                                     std::string* why) {
  std::string rapl_error;
  try {
    auto meter = load_power_meter("rapl", rapl_options, search_dirs);
    if (why) *why = "using the RAPL meter (hardware energy counters)";
    return meter;
  } catch (const std::exception& e) {
    rapl_error = e.what();
  }
  try {
    auto meter = load_power_meter("model", "", search_dirs);
    if (why) *why = "RAPL unavailable (" + rapl_error + "): using the model meter";
    return meter;
  } catch (const std::exception& e) {
    throw std::runtime_error("no power meter: " + rapl_error + "; " + e.what());
  }
}

std::vector<std::string> default_plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* dir = std::getenv("SCHED_PLUGIN_DIR"); dir && *dir) dirs.emplace_back(dir);
  // An installed nodeagent uses its own prefix's plugins, not a build tree's.
  if (auto installed = layout::installed_plugin_dir()) dirs.push_back(*installed);
  dirs.emplace_back(SCHED_PLUGIN_BUILD_DIR);
  return dirs;
}

}  // namespace sched::plugins
