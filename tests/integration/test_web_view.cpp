// schedd's web view in headless Chromium (docs/admin.md "Web view"): the
// page is driven through chromedriver's WebDriver protocol (JSON over HTTP,
// with civetweb's client). It loads, shows a job submitted with the CLI as
// running, and shows a malleable job's expansion as it happens — from the
// event stream, with no reload of the page. A screenshot is written where
// $SCHED_WEB_VIEW_PNG says (docs/images/web-view.png is one).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cluster.hpp"
#include "http_get.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

using nlohmann::json;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kChromedriver = "/usr/bin/chromedriver";

// FCFS only: nothing is resized until the file is replaced.
constexpr const char* kHoldPolicy = R"(
local P = { name = "hold", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
end
return P
)";

// FCFS, then every steady malleable job grows to its largest size.
constexpr const char* kGrowPolicy = R"(
local P = { name = "grow", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" and job.state == "RUNNING" and job.size < job.max_nodes and
       ctx.nodes_idle > 0 then
      ctx:expand(job, math.min(job.max_nodes, job.size + ctx.nodes_idle))
    end
  end
end
return P
)";

void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);  // the daemon never reads half a file
}

std::string base64_decode(const std::string& text) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    const auto at = alphabet.find(c);
    if (at == std::string::npos) continue;  // '=' and line breaks
    value = (value << 6) | static_cast<unsigned>(at);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return out;
}

// One WebDriver session of headless Chromium, through a chromedriver of its own.
class Browser {
 public:
  explicit Browser(const std::string& log) {
    port_ = free_port();
    driver_ = std::make_unique<Process>(
        std::vector<std::string>{kChromedriver, "--port=" + std::to_string(port_)}, log);
    const bool ready = eventually(
        [&] {
          const HttpReply status = http_get(port_, "/status");
          return status.status == 200 && json::parse(status.body, nullptr, false)
                                             .value("value", json::object())
                                             .value("ready", false);
        },
        std::chrono::seconds(30));
    if (!ready) throw std::runtime_error("chromedriver did not start; its log: " + read_file(log));
    // As root Chromium needs --no-sandbox; there is no display.
    const json capabilities = {
        {"capabilities",
         {{"alwaysMatch",
           {{"browserName", "chrome"},
            {"goog:chromeOptions",
             {{"binary", kChromium},
              {"args",
               {"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1440,1100", "--hide-scrollbars"}}}}}}}}};
    const json reply = command("POST", "/session", capabilities);
    session_ = reply.value("sessionId", "");
    if (session_.empty()) throw std::runtime_error("no session: " + reply.dump());
  }
  ~Browser() {
    if (!session_.empty()) (void)http_request(port_, "DELETE", "/session/" + session_);
  }

  // A command's reply body; its "value" holds the result or an error.
  json command(const std::string& method, const std::string& path, const json& body = nullptr) {
    const HttpReply reply =
        http_request(port_, method, path, body.is_null() ? std::string() : body.dump());
    if (reply.status == 0) throw std::runtime_error("chromedriver: " + reply.error);
    const json out = json::parse(reply.body, nullptr, false);
    if (out.is_discarded()) throw std::runtime_error("chromedriver said: " + reply.body);
    if (reply.status != 200) throw std::runtime_error(method + " " + path + ": " + reply.body);
    return out.value("value", json());
  }
  json session(const std::string& method, const std::string& path, const json& body = nullptr) {
    return command(method, "/session/" + session_ + path, body);
  }
  void open(const std::string& url) { session("POST", "/url", {{"url", url}}); }
  // Runs `script` in the page and returns what it returns.
  json run(const std::string& script) {
    return session("POST", "/execute/sync", {{"script", script}, {"args", json::array()}});
  }
  // An element's attribute, "" when there is no such element.
  std::string attribute(const std::string& selector, const std::string& name) {
    const json value = run("const e = document.querySelector(" + json(selector).dump() +
                           "); return e ? e.getAttribute(" + json(name).dump() + ") : null;");
    return value.is_string() ? value.get<std::string>() : "";
  }
  std::string screenshot_png() { return base64_decode(session("GET", "/screenshot")); }

 private:
  int port_ = 0;
  std::unique_ptr<Process> driver_;
  std::string session_;
};

TEST(WebView, ShowsASubmittedJobRunningAndAResizeAsTheyHappen) {
  ASSERT_TRUE(std::filesystem::exists(kChromium) && std::filesystem::exists(kChromedriver))
      << "scripts/install-deps.sh installs chromium and chromium-driver";
  TempDir dir("sched-web");
  const std::string policy = dir.str() + "/policy.lua";
  write_file(policy, kHoldPolicy);
  const int http_port = free_port();
  ClusterOptions options;
  options.policy = policy;
  options.adapt_timeout_s = 30;
  options.extra_config = "\n[http]\nlisten = \"127.0.0.1:" + std::to_string(http_port) + "\"\n";
  LocalCluster cluster(options);
  for (const char* node : {"n1", "n2", "n3", "n4"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(4)) << cluster.logs();
  // A corridor, so that the power chart has its band.
  ASSERT_EQ(run_sched(cluster, {"corridor", "set", "200", "420"}).status, 0);

  Browser browser(dir.str() + "/chromedriver.log");
  browser.open("http://127.0.0.1:" + std::to_string(http_port) + "/");
  ASSERT_TRUE(eventually([&] { return browser.attribute("#node-n1", "data-state") == "idle"; }))
      << browser.run("return document.body.innerText;").dump();

  // A job submitted with the CLI shows as running, on its node.
  const CliRun submitted =
      run_sched(cluster, {"submit", "--parsable", "-J", "simulation", "-N", "1", "-D",
                          cluster.work_dir(), "--wrap", "sleep 60"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string rigid = submitted.out.substr(0, submitted.out.find_first_of("\n;"));
  ASSERT_TRUE(
      eventually([&] { return browser.attribute("#job-" + rigid, "data-state") == "RUNNING"; },
                 std::chrono::seconds(15)))
      << browser.run("return document.body.innerText;").dump() << cluster.logs();
  // Its node's tile names it.
  const std::string node = cluster.job(std::stoll(rigid)).nodelist.front();
  EXPECT_EQ(browser.attribute("#node-" + node, "data-job"), rigid);
  EXPECT_EQ(browser.attribute("#node-" + node, "data-state"), "allocated");
  EXPECT_EQ(browser.attribute("#gantt-job-" + rigid, "data-state"), "RUNNING");

  // A malleable job of 1 to 2 nodes that follows adaptations (mall_probe).
  const std::string pids = cluster.work_dir() + "/pids";
  const std::string stop = cluster.work_dir() + "/stop";
  proto::SubmitRequest request;
  request.job.name = "malleable-cfd";
  request.job.kind = "malleable";
  request.job.nodes = 1;
  request.job.min_nodes = 1;
  request.job.max_nodes = 2;
  request.job.workdir = cluster.work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_MALL_PROBE_BIN;
  request.job.env["MALL_PROBE_PIDS"] = pids;
  request.job.script = "#!/bin/sh\n$SCHED run $APP 100 " + stop + "\n";
  const auto malleable =
      cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  const std::string id = std::to_string(malleable);
  // Two more that wait, for the queue.
  for (const char* name : {"post-process", "archive"}) {
    ASSERT_EQ(run_sched(cluster, {"submit", "-J", name, "-N", "3", "-D", cluster.work_dir(),
                                  "--wrap", "true"})
                  .status,
              0);
  }
  ASSERT_TRUE(eventually(
      [&] {
        return read_file(cluster.job(malleable).output).find("start on") != std::string::npos;
      },
      std::chrono::seconds(15)))
      << read_file(cluster.job(malleable).output) << cluster.logs();
  ASSERT_TRUE(eventually([&] { return browser.attribute("#job-" + id, "data-size") == "1"; }));
  const std::string seen_before = browser.attribute("body", "data-seq");

  // The policy grows it: the page shows the new size and the resize.
  write_file(policy, kGrowPolicy);
  ASSERT_TRUE(eventually([&] { return browser.attribute("#job-" + id, "data-size") == "2"; },
                         std::chrono::seconds(30)))
      << browser.run("return document.body.innerText;").dump() << cluster.logs();
  ASSERT_TRUE(
      eventually([&] { return browser.attribute("#gantt-job-" + id, "data-resizes") == "1"; }));
  EXPECT_EQ(browser.attribute("#gantt-job-" + id, "data-size"), "2");
  EXPECT_EQ(
      browser.run("return document.querySelectorAll('#gantt-job-" + id + " .resize').length;"), 1);
  EXPECT_EQ(browser.attribute("#job-" + id, "data-state"), "RUNNING");
  // It came over the event stream: the same page, later events.
  EXPECT_GT(std::stoull(browser.attribute("body", "data-seq")), std::stoull(seen_before));
  EXPECT_NE(browser.run("return document.getElementById('events').innerText;")
                .get<std::string>()
                .find("job.resized job " + id),
            std::string::npos);
  EXPECT_EQ(browser.run("return document.querySelectorAll('#queue tr[id^=queued-]').length;"), 2);
  EXPECT_NE(browser.attribute("#corridor", "d"), "");

  // Some seconds of power history, then the picture (a longer history when
  // it is kept: docs/images/web-view.png).
  const char* target = std::getenv("SCHED_WEB_VIEW_PNG");
  std::this_thread::sleep_for(std::chrono::seconds(target && *target ? 20 : 4));
  const std::string png = browser.screenshot_png();
  ASSERT_GT(png.size(), 1000U);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::ofstream(target && *target ? target : dir.str() + "/web-view.png", std::ios::binary) << png;

  std::ofstream(stop) << "stop\n";  // mall_probe ends
  std::ifstream in(pids);
  for (pid_t pid = 0; in >> pid;) ::kill(pid, SIGKILL);
}

}  // namespace
}  // namespace sched::testing
