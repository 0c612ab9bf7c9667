// Text checks of the wire (proto/text.hpp): UTF-8 validity by the standard's
// table, and excerpts that are bounded, valid UTF-8 and say what was cut.
#include <gtest/gtest.h>

#include <string>

#include "sched/proto/envelope.hpp"
#include "sched/proto/text.hpp"

namespace sched::proto {
namespace {

TEST(Text, Utf8ValidityFollowsTheStandard) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(valid_utf8("caf\xe9"));                                   // Latin-1
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));                                  // overlong '/'
  EXPECT_FALSE(valid_utf8("\xe0\x80\xaf"));                              // overlong, 3 bytes
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));                              // a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));                          // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));                                  // cut short
  EXPECT_FALSE(valid_utf8("\xff"));
}

TEST(Text, AnExcerptIsBoundedValidAndSaysWhatWasCut) {
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt("tab\there"), "tab\\x09here");
  EXPECT_EQ(excerpt("caf\xe9"), "caf\\xE9");
  const std::string long_text(100000, 'x');
  const std::string cut = excerpt(long_text, 10);
  EXPECT_EQ(cut, "xxxxxxxxxx… (100000 bytes)");
  // A character is never split: "é" is two bytes.
  EXPECT_EQ(excerpt("\xc3\xa9\xc3\xa9\xc3\xa9", 5), "\xc3\xa9\xc3\xa9… (6 bytes)");
  EXPECT_TRUE(valid_utf8(excerpt("\xff\xfe\xc3", 64)));
}

TEST(Text, AnErrorReplyCarriesABoundedTypeAndMessage) {
  const std::string type(100000, 't');
  const std::string message = "unknown message type '" + type + "'";
  const std::string encoded = encode_error(type, 3, code::kUnknownType, message);
  EXPECT_LT(encoded.size(), kMaxTypeBytes + kMaxErrorMessageBytes + 200);
  const Envelope reply = decode(encoded.data(), encoded.size());
  ASSERT_TRUE(reply.error);
  EXPECT_EQ(reply.seq, 3u);
  EXPECT_LE(reply.error->message.size(), kMaxErrorMessageBytes + 40);
  EXPECT_NE(reply.error->message.find("bytes)"), std::string::npos);
  // Short, valid messages go through as they are.
  const std::string small = encode_error("submit", 4, code::kInvalid, "job.name: too long");
  EXPECT_EQ(decode(small.data(), small.size()).error->message, "job.name: too long");
  const std::string latin1 = encode_error("submit", 5, code::kInvalid, "bad 'caf\xe9'");
  EXPECT_EQ(decode(latin1.data(), latin1.size()).error->message, "bad 'caf\\xE9'");
}

}  // namespace
}  // namespace sched::proto
