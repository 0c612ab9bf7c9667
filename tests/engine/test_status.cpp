// Status and Result (sched/status.hpp), and the reading of a Lua error's
// location into a PolicyFailure (sched/policy_failure.hpp).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sched/policy_failure.hpp"
#include "sched/status.hpp"

namespace sched {
namespace {

TEST(Status, SuccessHasNoCodeAndNoMessage) {
  const Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.code(), StatusCode::Ok);
  EXPECT_EQ(ok.message(), "");
  EXPECT_EQ(ok, Status(StatusCode::Ok, "ignored")) << "an Ok code is success, whatever the text";
  EXPECT_EQ(sizeof(Status), sizeof(void*)) << "success is one null pointer";
}

TEST(Status, AFailureKeepsItsCodeAndMessageThroughCopiesAndMoves) {
  const Status failure = Status::conflict("job 7 is already ending");
  EXPECT_FALSE(failure.ok());
  EXPECT_EQ(failure.code(), StatusCode::Conflict);
  EXPECT_EQ(failure.message(), "job 7 is already ending");
  Status copy = failure;
  EXPECT_EQ(copy, failure);
  Status moved = std::move(copy);
  EXPECT_EQ(moved, failure);
  copy = Status::not_found("no job 8");
  EXPECT_EQ(copy.code(), StatusCode::NotFound);
  EXPECT_NE(copy, failure);
  std::ostringstream text;
  text << failure << " / " << Status();
  EXPECT_EQ(text.str(), "conflict: job 7 is already ending / ok");
}

TEST(Result, HoldsAValueOrAStatus) {
  const Result<int> value = 42;
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 42);
  EXPECT_EQ(value.status(), Status());
  EXPECT_EQ(value.code(), StatusCode::Ok);
  EXPECT_EQ(value.value(), 42);
  EXPECT_EQ(value.error(), "");

  const Result<int> failure = Status::invalid("nodes must be at least 1");
  EXPECT_FALSE(failure.ok());
  EXPECT_EQ(failure.code(), StatusCode::Invalid);
  EXPECT_EQ(failure.status(), Status::invalid("nodes must be at least 1"));
  EXPECT_EQ(failure.error(), "nodes must be at least 1");

  const Result<int> confused = Status();
  EXPECT_FALSE(confused.ok()) << "a Result made from success still has no value";
  EXPECT_EQ(confused.code(), StatusCode::Invalid);
}

TEST(PolicyFailure, ReadsFileAndLineFromALuaMessage) {
  const auto located = PolicyFailure::from_lua(PolicyFailureCode::Runtime,
                                               "fcfs.lua:12: attempt to index a nil value");
  EXPECT_EQ(located.code, PolicyFailureCode::Runtime);
  EXPECT_EQ(located.file, "fcfs.lua");
  EXPECT_EQ(located.line, 12);
  EXPECT_EQ(located.message, "fcfs.lua:12: attempt to index a nil value")
      << "kept whole for people";

  const auto chunk = PolicyFailure::from_lua(PolicyFailureCode::Syntax,
                                             "[string \"a:b\"]:3: unexpected symbol near 'end'");
  EXPECT_EQ(chunk.file, "[string \"a:b\"]");
  EXPECT_EQ(chunk.line, 3);

  const auto module = PolicyFailure::from_lua(PolicyFailureCode::Runtime, "lib/queue.lua:7: boom");
  EXPECT_EQ(module.file, "lib/queue.lua");
  EXPECT_EQ(module.line, 7);

  for (const char* bare : {"instruction limit (1000) exceeded", "boom", "x.lua: not a location",
                           "x.lua:12 no colon after the line", "x.lua:: empty line", ""}) {
    const auto failure = PolicyFailure::from_lua(PolicyFailureCode::Timeout, bare);
    EXPECT_EQ(failure.file, "") << bare;
    EXPECT_EQ(failure.line, 0) << bare;
    EXPECT_EQ(failure.message, bare);
  }
}

TEST(PolicyFailure, APrefixKeepsTheLocation) {
  const auto failure =
      PolicyFailure::from_lua(PolicyFailureCode::Runtime, "p.lua:3: boom").prefixed("dry pass: ");
  EXPECT_EQ(failure.message, "dry pass: p.lua:3: boom");
  EXPECT_EQ(failure.file, "p.lua");
  EXPECT_EQ(failure.line, 3);
  EXPECT_EQ(to_string(PolicyFailureCode::Syntax), "syntax");
  EXPECT_EQ(to_string(PolicyFailureCode::Runtime), "runtime");
  EXPECT_EQ(to_string(PolicyFailureCode::Timeout), "timeout");
  EXPECT_EQ(to_string(PolicyFailureCode::Memory), "memory");
  EXPECT_EQ(to_string(PolicyFailureCode::Api), "api");
  EXPECT_EQ(to_string(PolicyFailureCode::Io), "io");
}

}  // namespace
}  // namespace sched
