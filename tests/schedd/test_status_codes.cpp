// The mapping of engine statuses to wire error codes (schedd/status_codes.hpp).
#include <gtest/gtest.h>

#include "lua_test_support.hpp"
#include "sched/proto/error.hpp"
#include "status_codes.hpp"

namespace sched::daemon {
namespace {

TEST(StatusCodes, EachFailureHasItsWireCode) {
  EXPECT_EQ(wire_code(StatusCode::NotFound), "not_found");
  EXPECT_EQ(wire_code(StatusCode::Conflict), "conflict");
  EXPECT_EQ(wire_code(StatusCode::Invalid), "invalid");
  EXPECT_EQ(wire_code(StatusCode::Ok), "internal");
}

TEST(StatusCodes, ThrowStatusCarriesTheCodeAndTheMessage) {
  try {
    throw_status(Status::not_found("no job 7"));
    FAIL() << "throw_status returned";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "not_found");
    EXPECT_STREQ(e.what(), "no job 7");
  }
  try {
    throw_status(Status::conflict("job 7 is already ending"));
    FAIL() << "throw_status returned";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "conflict");
    EXPECT_STREQ(e.what(), "job 7 is already ending");
  }
}

TEST(StatusCodes, ThrowingASuccessIsAnInternalError) {
  try {
    throw_status(Status());
    FAIL() << "throw_status returned";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "internal");
  }
}

// What the cancel handler answers today (it looks the job up to tell the two
// apart) is what the engine's status now says by itself.
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
