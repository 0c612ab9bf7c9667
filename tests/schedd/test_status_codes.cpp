// The mapping of engine statuses to wire error codes (schedd/status_codes.hpp).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "lua_test_support.hpp"
#include "sched/proto/error.hpp"
#include "status_codes.hpp"

namespace sched::daemon {
namespace {

// Each status code with its wire code; a success has none ("internal":
// answering an error for a success is a bug).
struct Case {
  Status status;
  std::string_view code;
};

std::vector<Case> cases() {
  return {{Status::not_found("no job 7"), "not_found"},
          {Status::conflict("job 7 is already ending"), "conflict"},
          {Status::invalid("nodes must be at least 1"), "invalid"},
          {Status(), "internal"}};
}

TEST(StatusCodes, EachStatusHasItsWireCode) {
  for (const Case& c : cases()) {
    EXPECT_EQ(wire_code(c.status.code()), c.code) << to_string(c.status.code());
  }
}

TEST(StatusCodes, ThrowStatusCarriesTheCodeAndTheMessage) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(to_string(c.status.code()));
    try {
      throw_status(c.status);
      ADD_FAILURE() << "throw_status returned";
    } catch (const proto::ProtoError& e) {
      EXPECT_EQ(e.code(), c.code);
      if (!c.status.ok()) {
        EXPECT_STREQ(e.what(), c.status.message().c_str());
      }
    }
  }
}

// The cancel handler answers with the engine's status: an unknown job is
// not_found, a job already ending or ended a conflict.
TEST(StatusCodes, CancelAnswersMapToTheCodesTheHandlerSends) {
  luatest::Harness h(2);
  const auto wire = [&](JobId id) -> std::string {
    const Status status = h.engine.cancel(id);
    return status.ok() ? "ok" : std::string(wire_code(status.code()));
  };
  EXPECT_EQ(wire(99), "not_found");
  const JobId id = h.submit(luatest::rigid(1));
  h.engine.set_policy(std::make_shared<luatest::StartAllPolicy>());
  h.engine.run_pass(PassReason::Manual);
  h.engine.job_started(id);
  EXPECT_EQ(wire(id), "ok");
  EXPECT_EQ(wire(id), "conflict") << "already ending";
  h.engine.job_ended(id, 0);
  EXPECT_EQ(wire(id), "conflict") << "already ended";
}

}  // namespace
}  // namespace sched::daemon
