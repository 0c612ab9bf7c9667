// The application-side malleability library (malleable/): what it sends its
// node agent (a fake one here, a ROUTER on an ipc:// path answering like
// nodeagent), how it fails outside a step or without an agent, rank-to-rank
// messages through the rendezvous folder, and the C++ wrapper.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "sched/malleable.h"
#include "sched/malleable.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/process_messages.hpp"
#include "sched/proto/transport.hpp"

namespace {

namespace proto = sched::proto;
using namespace std::chrono_literals;

// A node agent's local endpoint: answers proc.init and proc.finalize,
// records what it receives.
class FakeAgent {
 public:
  struct Config {
    std::string status = "existing";
    int size = 0;
    std::optional<std::string> refuse;  // answer proc.init with this error
    // proc.resize: answered with this state ("pending", "refused", ...) and
    // request id 7, or with an error of this code when set.
    std::string resize_state = "pending";
    std::optional<std::string> resize_error;
  };

  FakeAgent(const std::string& endpoint, Config config)
      : config_(std::move(config)), socket_(context_, zmq::socket_type::router) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind(endpoint);
    thread_ = std::thread([this] { run(); });
  }
  ~FakeAgent() {
    stop_ = true;
    thread_.join();
  }

  std::vector<proto::ProcInit> inits() const { return locked(inits_); }
  std::vector<proto::ProcPhase> phases() const { return locked(phases_); }
  std::vector<proto::ProcFinalize> finalizes() const { return locked(finalizes_); }

  // Sends the process of this rank an adaptation notice (proc.adapt_pending,
  // or proc.adapt_abort when `withdrawn`), from the agent's thread.
  void announce(int rank, std::uint64_t adaptation, bool withdrawn = false) {
    std::lock_guard lock(mutex_);
    notices_.push_back({rank, adaptation, withdrawn});
  }

  std::vector<proto::ProcResize> resizes() const { return locked(resizes_); }

  // Sends the process of this rank a later answer to a request
  // (proc.resize_answer), from the agent's thread.
  void answer(int rank, const proto::ResizeAnswer& answer) {
    std::lock_guard lock(mutex_);
    answers_.push_back({rank, answer});
  }

  // Waits until `count` phases have arrived (they get no reply to wait for).
  bool wait_phases(std::size_t count) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, 5s, [&] { return phases_.size() >= count; });
  }

 private:
  template <class T>
  T locked(const T& value) const {
    std::lock_guard lock(mutex_);
    return value;
  }

  void run() {
    while (!stop_) {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 10ms);
      while (auto routed = proto::receive_routed(socket_)) {
        handle(routed->peer, proto::decode(routed->payload.data(), routed->payload.size()));
      }
      std::lock_guard lock(mutex_);
      for (const Notice& notice : notices_) {
        const auto type =
            notice.withdrawn ? proto::type::kProcAdaptAbort : proto::type::kProcAdaptPending;
        proto::send_routed(
            socket_, peers_.at(notice.rank),
            proto::encode_request(type, 0, proto::ProcAdaptNotice{42, notice.adaptation}));
      }
      notices_.clear();
      for (const auto& [rank, answer] : answers_) {
        proto::send_routed(socket_, peers_.at(rank),
                           proto::encode_request(proto::type::kProcResizeAnswer, 0, answer));
      }
      answers_.clear();
    }
  }

  void handle(const std::string& peer, const proto::Envelope& message) {
    std::lock_guard lock(mutex_);
    if (message.type == proto::type::kProcInit) {
      inits_.push_back(message.body_as<proto::ProcInit>());
      peers_[inits_.back().rank] = peer;
      if (config_.refuse) {
        proto::send_routed(socket_, peer,
                           proto::encode_error(message.type, message.seq, proto::code::kNotFound,
                                               *config_.refuse));
        return;
      }
      proto::ProcInitReply reply;
      reply.status = config_.status;
      reply.size = config_.size;
      proto::send_routed(socket_, peer, proto::encode_reply(message.type, message.seq, reply));
    } else if (message.type == proto::type::kProcPhase) {
      phases_.push_back(message.body_as<proto::ProcPhase>());
      arrived_.notify_all();
    } else if (message.type == proto::type::kProcResize) {
      resizes_.push_back(message.body_as<proto::ProcResize>());
      if (config_.resize_error) {
        proto::send_routed(socket_, peer,
                           proto::encode_error(message.type, message.seq, *config_.resize_error,
                                               "the node agent is not registered"));
        return;
      }
      proto::ResizeAnswer answer;
      answer.job = resizes_.back().job;
      answer.request = 7;
      answer.state = config_.resize_state;
      answer.nodes = resizes_.back().nodes;
      if (answer.state == "refused") {
        answer.code = "invalid";
        answer.message = "job 42 takes 1 to 4 nodes: 9 is outside its bounds or constraint";
      }
      proto::send_routed(socket_, peer, proto::encode_reply(message.type, message.seq, answer));
    } else if (message.type == proto::type::kProcFinalize) {
      finalizes_.push_back(message.body_as<proto::ProcFinalize>());
      proto::send_routed(socket_, peer,
                         proto::encode_reply(message.type, message.seq, proto::Empty{}));
    }
  }

  Config config_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::atomic<bool> stop_ = false;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<proto::ProcInit> inits_;
  std::vector<proto::ProcPhase> phases_;
  std::vector<proto::ProcFinalize> finalizes_;
  std::vector<proto::ProcResize> resizes_;
  std::vector<std::pair<int, proto::ResizeAnswer>> answers_;
  std::map<int, std::string> peers_;  // rank → routing id, from proc.init
  struct Notice {
    int rank;
    std::uint64_t adaptation;
    bool withdrawn;
  };
  std::vector<Notice> notices_;
};

struct Finalizer {
  void operator()(sched_mall* m) const { sched_mall_finalize(m); }
};
using Handle = std::unique_ptr<sched_mall, Finalizer>;

const char* const kVariables[] = {"SCHED_JOB_ID",
                                  "SCHED_STEP_ID",
                                  "SCHED_PROCID",
                                  "SCHED_NTASKS",
                                  "SCHED_NODEID",
                                  "SCHED_AGENT_ENDPOINT",
                                  "SCHED_MALL_TIMEOUT_MS",
                                  "SCHED_MALL_BIND",
                                  "SCHED_MALL_RENDEZVOUS_DIR",
                                  "SCHED_MALL_REQUEST_TIMEOUT_S"};

class MalleableLib : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
    }
    char pattern[] = "/tmp/sched-mall-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    agent_endpoint_ = "ipc://" + (dir_ / "agent.ipc").string();
    ::setenv("SCHED_JOB_ID", "42", 1);
    ::setenv("SCHED_STEP_ID", "3", 1);
    ::setenv("SCHED_PROCID", "0", 1);
    ::setenv("SCHED_NTASKS", "2", 1);
    ::setenv("SCHED_NODEID", "0", 1);
    ::setenv("SCHED_AGENT_ENDPOINT", agent_endpoint_.c_str(), 1);
    ::setenv("SCHED_MALL_TIMEOUT_MS", "3000", 1);
    ::unsetenv("SCHED_MALL_BIND");
    ::unsetenv("SCHED_MALL_RENDEZVOUS_DIR");
    ::unsetenv("SCHED_MALL_REQUEST_TIMEOUT_S");
  }

  void TearDown() override {
    agent_.reset();
    for (const char* name : kVariables) {
      if (auto it = saved_.find(name); it != saved_.end()) {
        ::setenv(name, it->second.c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // An agent answering proc.init with {status, size}.
  FakeAgent& start_agent(int size, const std::string& status = "existing") {
    FakeAgent::Config config;
    config.size = size;
    config.status = status;
    agent_.emplace(agent_endpoint_, std::move(config));
    return *agent_;
  }
  FakeAgent& start_agent(FakeAgent::Config config) {
    agent_.emplace(agent_endpoint_, std::move(config));
    return *agent_;
  }
  // An agent refusing proc.init with this message.
  void start_refusing_agent(const std::string& message) {
    FakeAgent::Config config;
    config.refuse = message;
    agent_.emplace(agent_endpoint_, std::move(config));
  }

  void use_rendezvous() { ::setenv("SCHED_MALL_RENDEZVOUS_DIR", (dir_ / "peers").c_str(), 1); }

  // Initialises the library as rank `rank` of the step.
  Handle init_rank(int rank, sched_mall_status* status = nullptr) {
    ::setenv("SCHED_PROCID", std::to_string(rank).c_str(), 1);
    sched_mall* m = nullptr;
    const int result = sched_mall_init(&m, status);
    EXPECT_EQ(result, SCHED_MALL_OK) << sched_mall_last_init_error();
    return Handle(m);
  }

  std::filesystem::path dir_;
  std::string agent_endpoint_;
  std::optional<FakeAgent> agent_;
  std::map<std::string, std::string> saved_;
};

void send_text(sched_mall* m, int to, const std::string& text) {
  ASSERT_EQ(sched_mall_send(m, to, text.data(), text.size()), SCHED_MALL_OK) << sched_mall_error(m);
}

std::string recv_text(sched_mall* m, int from) {
  void* data = nullptr;
  std::size_t size = 0;
  const int result = sched_mall_recv(m, from, &data, &size);
  if (result != SCHED_MALL_OK) return std::string("error: ") + sched_mall_error(m);
  std::string text(static_cast<const char*>(data), size);
  sched_mall_free(data);
  return text;
}

// Probes until the agent's notice has arrived (up to 5 s).
bool eventually_pending(sched_mall* m) {
  for (int i = 0; i < 500; ++i) {
    int pending = 0;
    if (sched_mall_probe(m, &pending) == SCHED_MALL_OK && pending) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST_F(MalleableLib, InitSendsProcInitFromTheEnvironment) {
  FakeAgent& agent = start_agent(2);
  sched_mall_status status = SCHED_MALL_NEW;
  Handle m = init_rank(1, &status);
  ASSERT_TRUE(m);
  EXPECT_EQ(status, SCHED_MALL_EXISTING);
  EXPECT_EQ(sched_mall_rank(m.get()), 1);
  EXPECT_EQ(sched_mall_size(m.get()), 2);

  const auto inits = agent.inits();
  ASSERT_EQ(inits.size(), 1u);
  EXPECT_EQ(inits[0].job, 42);
  EXPECT_EQ(inits[0].step, 3);
  EXPECT_EQ(inits[0].rank, 1);
  EXPECT_EQ(inits[0].pid, ::getpid());
  // The data endpoint as bound: loopback, with the port the system chose.
  EXPECT_EQ(inits[0].endpoint.rfind("tcp://127.0.0.1:", 0), 0u) << inits[0].endpoint;
  EXPECT_EQ(inits[0].endpoint.find('*'), std::string::npos) << inits[0].endpoint;
}

TEST_F(MalleableLib, StatusNewComesFromTheReply) {
  start_agent(2, "new");
  sched_mall_status status = SCHED_MALL_EXISTING;
  Handle m = init_rank(0, &status);
  EXPECT_EQ(status, SCHED_MALL_NEW);
}

TEST_F(MalleableLib, SizeComesFromTheReplyWhenItGivesOne) {
  start_agent(4);
  Handle m = init_rank(1);  // SCHED_NTASKS says 2
  EXPECT_EQ(sched_mall_size(m.get()), 4);
}

TEST_F(MalleableLib, SizeFallsBackToTheEnvironment) {
  start_agent(0);
  Handle m = init_rank(1);
  EXPECT_EQ(sched_mall_size(m.get()), 2);
}

TEST_F(MalleableLib, UnknownStatusIsAProtocolError) {
  start_agent(2, "maybe");
  sched_mall* m = nullptr;
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_EPROTO);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("'maybe'"), std::string::npos);
}

TEST_F(MalleableLib, AgentRefusalIsAProtocolErrorWithItsMessage) {
  start_refusing_agent("job 42 has no step 3 here");
  sched_mall* m = nullptr;
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_EPROTO);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("job 42 has no step 3 here"),
            std::string::npos)
      << sched_mall_last_init_error();
}

TEST_F(MalleableLib, ReportPhaseArrivesWithTheNumbers) {
  FakeAgent& agent = start_agent(2);
  Handle m = init_rank(1);
  EXPECT_EQ(sched_mall_report_phase(m.get(), 1.25, 3.5), SCHED_MALL_OK);
  EXPECT_EQ(sched_mall_report_phase(m.get(), 0, 2), SCHED_MALL_OK);
  ASSERT_TRUE(agent.wait_phases(2));
  const auto phases = agent.phases();
  EXPECT_EQ(phases[0].job, 42);
  EXPECT_EQ(phases[0].rank, 1);
  EXPECT_DOUBLE_EQ(phases[0].comm_s, 1.25);
  EXPECT_DOUBLE_EQ(phases[0].compute_s, 3.5);
  EXPECT_DOUBLE_EQ(phases[1].comm_s, 0);
  EXPECT_DOUBLE_EQ(phases[1].compute_s, 2);
}

TEST_F(MalleableLib, ReportPhaseRefusesBadTimesAndSendsNothing) {
  FakeAgent& agent = start_agent(2);
  Handle m = init_rank(0);
  EXPECT_EQ(sched_mall_report_phase(m.get(), -1, 2), SCHED_MALL_EINVAL);
  EXPECT_NE(std::string(sched_mall_error(m.get())).find("not negative"), std::string::npos);
  EXPECT_EQ(sched_mall_report_phase(m.get(), 1, std::nan("")), SCHED_MALL_EINVAL);
  // A call that succeeds clears the message.
  int pending = 1;
  EXPECT_EQ(sched_mall_probe(m.get(), &pending), SCHED_MALL_OK);
  EXPECT_STREQ(sched_mall_error(m.get()), "");
  // The finalize reply comes after anything sent before it.
  EXPECT_EQ(sched_mall_finalize(m.release()), SCHED_MALL_OK);
  EXPECT_TRUE(agent.phases().empty());
}

// ---- issue 17 item 1: evolving requests

TEST_F(MalleableLib, RequestSendsProcResizeAndKeepsTheAnswerUntilTheNextOneComes) {
  FakeAgent& agent = start_agent(2);
  ::setenv("SCHED_MALL_REQUEST_TIMEOUT_S", "45", 1);
  Handle m = init_rank(0);
  int request = 0;
  ASSERT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 4, "more rows", &request), SCHED_MALL_OK)
      << sched_mall_error(m.get());
  EXPECT_EQ(request, 1) << "the handle's own numbers, from 1";
  const auto sent = agent.resizes();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].job, 42);
  EXPECT_EQ(sent[0].op, "grow");
  EXPECT_EQ(sent[0].nodes, 4);
  EXPECT_EQ(sent[0].reason, "more rows");
  EXPECT_DOUBLE_EQ(sent[0].timeout_s, 45);
  sched_mall_request_info info{};
  ASSERT_EQ(sched_mall_request_status(m.get(), request, &info), SCHED_MALL_OK);
  EXPECT_EQ(info.state, SCHED_MALL_REQUEST_PENDING);
  EXPECT_EQ(info.nodes, 4);
  EXPECT_STREQ(info.code, "");
  // The grant comes later, as a notice for schedd's request id.
  proto::ResizeAnswer granted;
  granted.job = 42;
  granted.request = 7;
  granted.state = "granted";
  granted.nodes = 3;  // in part
  agent.answer(0, granted);
  for (int i = 0; i < 500 && info.state == SCHED_MALL_REQUEST_PENDING; ++i) {
    std::this_thread::sleep_for(10ms);
    ASSERT_EQ(sched_mall_request_status(m.get(), request, &info), SCHED_MALL_OK);
  }
  EXPECT_EQ(info.state, SCHED_MALL_REQUEST_GRANTED);
  EXPECT_EQ(info.nodes, 3);
  EXPECT_STREQ(sched_mall_request_state_name(info.state), "GRANTED");
  // A shrink is a second request with its own number.
  int second = 0;
  ASSERT_EQ(sched_mall_request(m.get(), SCHED_MALL_SHRINK, 1, nullptr, &second), SCHED_MALL_OK);
  EXPECT_EQ(second, 2);
  EXPECT_EQ(agent.resizes().back().op, "shrink");
  EXPECT_EQ(agent.resizes().back().reason, "");
  EXPECT_DOUBLE_EQ(agent.resizes().back().timeout_s, 45);
}

TEST_F(MalleableLib, ARefusalComesWithItsCodeAndText) {
  FakeAgent::Config config;
  config.size = 2;
  config.resize_state = "refused";
  start_agent(config);
  Handle m = init_rank(0);
  int request = 0;
  ASSERT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 9, "", &request), SCHED_MALL_OK);
  sched_mall_request_info info{};
  ASSERT_EQ(sched_mall_request_status(m.get(), request, &info), SCHED_MALL_OK);
  EXPECT_EQ(info.state, SCHED_MALL_REQUEST_REFUSED);
  EXPECT_STREQ(info.code, "invalid");
  EXPECT_NE(std::string(info.message).find("takes 1 to 4 nodes"), std::string::npos)
      << info.message;
}

TEST_F(MalleableLib, RequestRefusesBadArgumentsAndSendsNothing) {
  FakeAgent& agent = start_agent(2);
  Handle m = init_rank(0);
  int request = -1;
  EXPECT_EQ(sched_mall_request(m.get(), 3, 4, "", &request), SCHED_MALL_EINVAL);
  EXPECT_NE(std::string(sched_mall_error(m.get())).find("SCHED_MALL_GROW"), std::string::npos);
  EXPECT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 0, "", &request), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 4, "", nullptr), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_request(nullptr, SCHED_MALL_GROW, 4, "", &request), SCHED_MALL_EINVAL);
  sched_mall_request_info info{};
  EXPECT_EQ(sched_mall_request_status(m.get(), 1, &info), SCHED_MALL_EINVAL)
      << "no request was made";
  ::setenv("SCHED_MALL_REQUEST_TIMEOUT_S", "soon", 1);
  EXPECT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 4, "", &request), SCHED_MALL_EENV);
  EXPECT_NE(std::string(sched_mall_error(m.get())).find("'soon'"), std::string::npos);
  EXPECT_TRUE(agent.resizes().empty());
}

TEST_F(MalleableLib, AnAgentThatCannotRelayIsAProtocolError) {
  FakeAgent::Config config;
  config.size = 2;
  config.resize_error = "unavailable";
  start_agent(config);
  Handle m = init_rank(0);
  int request = 0;
  EXPECT_EQ(sched_mall_request(m.get(), SCHED_MALL_GROW, 4, "", &request), SCHED_MALL_EPROTO);
  EXPECT_NE(std::string(sched_mall_error(m.get())).find("not registered"), std::string::npos)
      << sched_mall_error(m.get());
}

TEST_F(MalleableLib, TheCppWrapperAsksAndReadsTheAnswer) {
  FakeAgent& agent = start_agent(2);
  ::setenv("SCHED_PROCID", "0", 1);
  sched::mall::Process process;
  const int request = process.request_grow(3, "why not");
  EXPECT_EQ(process.request_status(request).state, SCHED_MALL_REQUEST_PENDING);
  EXPECT_EQ(agent.resizes().back().nodes, 3);
  try {
    process.request_shrink(0);
    FAIL() << "0 nodes was accepted";
  } catch (const sched::mall::Error& e) {
    EXPECT_EQ(e.code(), SCHED_MALL_EINVAL);
  }
}

TEST_F(MalleableLib, FinalizeSendsProcFinalize) {
  FakeAgent& agent = start_agent(2);
  Handle m = init_rank(1);
  EXPECT_TRUE(agent.finalizes().empty());
  EXPECT_EQ(sched_mall_finalize(m.release()), SCHED_MALL_OK) << sched_mall_last_init_error();
  const auto finalizes = agent.finalizes();
  ASSERT_EQ(finalizes.size(), 1u);
  EXPECT_EQ(finalizes[0].job, 42);
  EXPECT_EQ(finalizes[0].rank, 1);
}

TEST_F(MalleableLib, FinalizeWithoutAnswerTimesOutAndStillFrees) {
  start_agent(2);
  ::setenv("SCHED_MALL_TIMEOUT_MS", "200", 1);
  Handle m = init_rank(0);
  agent_.reset();  // the agent goes away
  EXPECT_EQ(sched_mall_finalize(m.release()), SCHED_MALL_ETIMEDOUT);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("proc.finalize"), std::string::npos);
}

TEST_F(MalleableLib, MissingEnvironmentIsEenvWithAClearMessage) {
  ::unsetenv("SCHED_JOB_ID");
  sched_mall* m = reinterpret_cast<sched_mall*>(0x1);
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_EENV);
  EXPECT_EQ(m, nullptr);
  const std::string message = sched_mall_last_init_error();
  EXPECT_NE(message.find("not inside a sched step"), std::string::npos) << message;
  EXPECT_NE(message.find("SCHED_JOB_ID"), std::string::npos) << message;
  EXPECT_EQ(std::string(sched_mall_error(nullptr)), message);
  EXPECT_STREQ(sched_mall_strerror(SCHED_MALL_EENV), "SCHED_MALL_EENV");
}

TEST_F(MalleableLib, MalformedVariablesAreEenvNamingThem) {
  ::setenv("SCHED_NTASKS", "2", 1);
  sched_mall* m = nullptr;
  ::setenv("SCHED_PROCID", "2", 1);  // ranks are 0 and 1
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_EENV);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("SCHED_PROCID='2'"), std::string::npos)
      << sched_mall_last_init_error();
  ::setenv("SCHED_PROCID", "0", 1);
  ::setenv("SCHED_MALL_TIMEOUT_MS", "soon", 1);
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_EENV);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("SCHED_MALL_TIMEOUT_MS"),
            std::string::npos);
}

TEST_F(MalleableLib, MissingAgentEndpointIsEnoagent) {
  ::unsetenv("SCHED_AGENT_ENDPOINT");
  sched_mall* m = nullptr;
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_ENOAGENT);
  EXPECT_NE(std::string(sched_mall_last_init_error()).find("SCHED_AGENT_ENDPOINT"),
            std::string::npos);
}

TEST_F(MalleableLib, NoAgentAnsweringTimesOutWithinTheTimeout) {
  ::setenv("SCHED_MALL_TIMEOUT_MS", "200", 1);
  sched_mall* m = nullptr;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(sched_mall_init(&m, nullptr), SCHED_MALL_ETIMEDOUT);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(m, nullptr);
  const std::string message = sched_mall_last_init_error();
  EXPECT_NE(message.find("proc.init"), std::string::npos) << message;
  EXPECT_NE(message.find(agent_endpoint_), std::string::npos) << message;
}

TEST_F(MalleableLib, NoAdaptationIsPendingYet) {
  start_agent(2);
  Handle m = init_rank(0);
  int pending = 1;
  EXPECT_EQ(sched_mall_probe(m.get(), &pending), SCHED_MALL_OK);
  EXPECT_EQ(pending, 0);
  sched_mall_adaptation adaptation{};
  EXPECT_EQ(sched_mall_adapt_begin(m.get(), &adaptation), SCHED_MALL_ENOTPENDING);
  EXPECT_EQ(sched_mall_adapt_commit(m.get()), SCHED_MALL_ENOTPENDING);
  EXPECT_EQ(sched_mall_probe(m.get(), nullptr), SCHED_MALL_EINVAL);
}

// Both ranks call the collective probe; rank 1's answer comes from a thread.
std::pair<int, int> probe_all_both(sched_mall* r0, sched_mall* r1) {
  int p0 = -1;
  int p1 = -1;
  int rc1 = SCHED_MALL_OK;
  std::thread other([&] { rc1 = sched_mall_probe_all(r1, &p1); });
  const int rc0 = sched_mall_probe_all(r0, &p0);
  other.join();
  EXPECT_EQ(rc0, SCHED_MALL_OK) << sched_mall_error(r0);
  EXPECT_EQ(rc1, SCHED_MALL_OK) << sched_mall_error(r1);
  return {p0, p1};
}

TEST_F(MalleableLib, ProbeAllGivesEveryRankTheSameAnswer) {
  FakeAgent& agent = start_agent(2);
  use_rendezvous();
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  EXPECT_EQ(probe_all_both(r0.get(), r1.get()), std::make_pair(0, 0));

  // Only rank 0 has heard of an adaptation: both are told, and rank 1 waits
  // for its own notice, which comes a little later.
  agent.announce(0, 7);
  ASSERT_TRUE(eventually_pending(r0.get()));
  std::thread late([&] {
    std::this_thread::sleep_for(100ms);
    agent.announce(1, 7);
  });
  EXPECT_EQ(probe_all_both(r0.get(), r1.get()), std::make_pair(1, 1));
  late.join();
  int pending = 0;
  EXPECT_EQ(sched_mall_probe(r1.get(), &pending), SCHED_MALL_OK);
  EXPECT_EQ(pending, 1) << "rank 1 saw its own notice before answering";
}

TEST_F(MalleableLib, AWithdrawnAdaptationIsAbortedAtAdaptBegin) {
  FakeAgent& agent = start_agent(2);
  use_rendezvous();
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  agent.announce(0, 8);
  agent.announce(1, 8);
  agent.announce(1, 8, true);  // withdrawn before rank 1 came to it
  ASSERT_TRUE(eventually_pending(r0.get()));
  EXPECT_EQ(probe_all_both(r0.get(), r1.get()), std::make_pair(1, 1));
  sched_mall_adaptation adaptation{};
  EXPECT_EQ(sched_mall_adapt_begin(r1.get(), &adaptation), SCHED_MALL_EABORTED)
      << sched_mall_error(r1.get());
  // Only once: afterwards nothing is pending.
  EXPECT_EQ(sched_mall_adapt_begin(r1.get(), &adaptation), SCHED_MALL_ENOTPENDING);
}

TEST_F(MalleableLib, SendRecvBetweenTwoRanksInOrder) {
  start_agent(2);
  use_rendezvous();
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  for (int i = 0; i < 5; ++i) send_text(r0.get(), 1, "from 0 #" + std::to_string(i));
  send_text(r1.get(), 0, "from 1");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(recv_text(r1.get(), 0), "from 0 #" + std::to_string(i));
  EXPECT_EQ(recv_text(r0.get(), 1), "from 1");

  // Each rank published "<job> <step> <endpoint>".
  std::ifstream file(dir_ / "peers" / "rank-1");
  std::string job, step, endpoint;
  file >> job >> step >> endpoint;
  EXPECT_EQ(job, "42");
  EXPECT_EQ(step, "3");
  EXPECT_EQ(endpoint.rfind("tcp://127.0.0.1:", 0), 0u);
}

TEST_F(MalleableLib, RecvKeepsOtherRanksMessagesForLater) {
  start_agent(3);
  ::setenv("SCHED_NTASKS", "3", 1);
  use_rendezvous();
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  Handle r2 = init_rank(2);
  for (int i = 0; i < 4; ++i) {
    send_text(r1.get(), 0, "1:" + std::to_string(i));
    send_text(r2.get(), 0, "2:" + std::to_string(i));
    send_text(r0.get(), 0, "0:" + std::to_string(i));  // to itself
  }
  // Everything from rank 2 first: rank 1's messages wait, in their order.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(recv_text(r0.get(), 2), "2:" + std::to_string(i));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(recv_text(r0.get(), 1), "1:" + std::to_string(i));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(recv_text(r0.get(), 0), "0:" + std::to_string(i));
}

TEST_F(MalleableLib, LargeAndEmptyMessagesArriveWhole) {
  start_agent(2);
  use_rendezvous();
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  std::vector<unsigned char> big(1 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<unsigned char>(i * 7 + i / 251);
  ASSERT_EQ(sched_mall_send(r0.get(), 1, big.data(), big.size()), SCHED_MALL_OK);
  ASSERT_EQ(sched_mall_send(r0.get(), 1, nullptr, 0), SCHED_MALL_OK);

  void* data = nullptr;
  std::size_t size = 0;
  ASSERT_EQ(sched_mall_recv(r1.get(), 0, &data, &size), SCHED_MALL_OK)
      << sched_mall_error(r1.get());
  ASSERT_EQ(size, big.size());
  EXPECT_EQ(std::memcmp(data, big.data(), size), 0);
  sched_mall_free(data);

  ASSERT_EQ(sched_mall_recv(r1.get(), 0, &data, &size), SCHED_MALL_OK);
  EXPECT_NE(data, nullptr);
  EXPECT_EQ(size, 0u);
  sched_mall_free(data);
}

TEST_F(MalleableLib, RecvTimesOutAndLosesNothing) {
  start_agent(2);
  use_rendezvous();
  ::setenv("SCHED_MALL_TIMEOUT_MS", "200", 1);
  Handle r0 = init_rank(0);
  Handle r1 = init_rank(1);
  void* data = nullptr;
  std::size_t size = 0;
  EXPECT_EQ(sched_mall_recv(r0.get(), 1, &data, &size), SCHED_MALL_ETIMEDOUT);
  EXPECT_NE(std::string(sched_mall_error(r0.get())).find("no message from rank 1"),
            std::string::npos);
  send_text(r1.get(), 0, "late");
  EXPECT_EQ(recv_text(r0.get(), 1), "late");
}

TEST_F(MalleableLib, SendWithoutAKnownPeerIsEnopeer) {
  start_agent(2);
  Handle r0 = init_rank(0);
  EXPECT_EQ(sched_mall_send(r0.get(), 1, "x", 1), SCHED_MALL_ENOPEER);
  EXPECT_NE(std::string(sched_mall_error(r0.get())).find("SCHED_MALL_RENDEZVOUS_DIR"),
            std::string::npos);
}

TEST_F(MalleableLib, StaleRendezvousFilesAreIgnored) {
  start_agent(2);
  use_rendezvous();
  ::setenv("SCHED_MALL_TIMEOUT_MS", "200", 1);
  std::filesystem::create_directories(dir_ / "peers");
  std::ofstream(dir_ / "peers" / "rank-1") << "42 2 tcp://127.0.0.1:1\n";  // the previous step
  Handle r0 = init_rank(0);
  EXPECT_EQ(sched_mall_send(r0.get(), 1, "x", 1), SCHED_MALL_ENOPEER);
  EXPECT_NE(std::string(sched_mall_error(r0.get())).find("rank-1"), std::string::npos);
}

TEST_F(MalleableLib, RanksOutOfRangeAndNullArgumentsAreEinval) {
  start_agent(2);
  use_rendezvous();
  Handle r0 = init_rank(0);
  void* data = nullptr;
  std::size_t size = 0;
  EXPECT_EQ(sched_mall_send(r0.get(), 2, "x", 1), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_send(r0.get(), -1, "x", 1), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_send(r0.get(), 0, nullptr, 3), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_recv(r0.get(), 5, &data, &size), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_recv(r0.get(), 0, nullptr, &size), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_report_phase(nullptr, 1, 1), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_init(nullptr, nullptr), SCHED_MALL_EINVAL);
  EXPECT_EQ(sched_mall_rank(nullptr), -1);
}

TEST_F(MalleableLib, CppWrapperThrowsWithTheMessage) {
  ::unsetenv("SCHED_STEP_ID");
  try {
    sched::mall::Process process;
    FAIL() << "no exception";
  } catch (const sched::mall::Error& e) {
    EXPECT_EQ(e.code(), SCHED_MALL_EENV);
    EXPECT_NE(std::string(e.what()).find("not inside a sched step"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("SCHED_STEP_ID"), std::string::npos);
  }
}

TEST_F(MalleableLib, CppWrapperExchangesAndFinalizesInItsDestructor) {
  FakeAgent& agent = start_agent(2);
  use_rendezvous();
  {
    ::setenv("SCHED_PROCID", "0", 1);
    sched::mall::Process p0;
    ::setenv("SCHED_PROCID", "1", 1);
    sched::mall::Process p1;
    EXPECT_EQ(p1.rank(), 1);
    EXPECT_EQ(p1.size(), 2);
    EXPECT_EQ(p1.status(), sched::mall::Status::Existing);
    EXPECT_FALSE(p1.probe());
    const std::vector<std::byte> bytes{std::byte{1}, std::byte{2}, std::byte{255}};
    p0.send(1, bytes);
    EXPECT_EQ(p1.recv(0), bytes);
    try {
      p0.adapt_begin();
      FAIL() << "no exception";
    } catch (const sched::mall::Error& e) {
      EXPECT_EQ(e.code(), SCHED_MALL_ENOTPENDING);
    }
    EXPECT_THROW(p0.report_phase(-1, 0), sched::mall::Error);
    sched::mall::Process moved = std::move(p0);
    EXPECT_EQ(moved.rank(), 0);
    EXPECT_TRUE(agent.finalizes().empty());
  }
  EXPECT_EQ(agent.finalizes().size(), 2u);
}

// A clock the test moves by hand.
struct FakeClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<FakeClock>;
  [[maybe_unused]] static constexpr bool is_steady = true;  // a Clock has it; unread here
  static inline time_point current{};
  static time_point now() { return current; }
};

TEST_F(MalleableLib, PhaseTimerSplitsCommAndCompute) {
  FakeAgent& agent = start_agent(2);
  ::setenv("SCHED_PROCID", "1", 1);
  sched::mall::Process process;
  sched::mall::BasicPhaseTimer<FakeClock> timer(process);

  timer.start_compute();
  FakeClock::current += 3s;
  timer.start_comm();
  FakeClock::current += 500ms;
  timer.start_compute();
  FakeClock::current += 1s;
  EXPECT_DOUBLE_EQ(timer.current().compute_seconds, 4.0);
  timer.start_comm();
  FakeClock::current += 250ms;
  timer.stop();
  FakeClock::current += 10s;  // stopped: not counted
  const auto phase = timer.report();
  EXPECT_DOUBLE_EQ(phase.comm_seconds, 0.75);
  EXPECT_DOUBLE_EQ(phase.compute_seconds, 4.0);

  // The next phase starts empty; report() stopped the timer.
  FakeClock::current += 5s;
  timer.start_comm();
  FakeClock::current += 2s;
  timer.report();

  ASSERT_TRUE(agent.wait_phases(2));
  const auto phases = agent.phases();
  EXPECT_EQ(phases[0].rank, 1);
  EXPECT_DOUBLE_EQ(phases[0].comm_s, 0.75);
  EXPECT_DOUBLE_EQ(phases[0].compute_s, 4.0);
  EXPECT_DOUBLE_EQ(phases[1].comm_s, 2.0);
  EXPECT_DOUBLE_EQ(phases[1].compute_s, 0.0);
}

}  // namespace
