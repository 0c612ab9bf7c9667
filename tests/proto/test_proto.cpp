// The wire protocol's encoding (proto/): every body survives a round trip,
// and every kind of bad input is a ProtoError with the right code and a
// message that names the problem, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "sched/proto/envelope.hpp"
#include "sched/proto/messages.hpp"

namespace sched::proto {
namespace {

// Packs an arbitrary msgpack map built by `fill` (for malformed messages).
template <class Fill>
std::string raw_map(std::uint32_t entries, Fill fill) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack_map(entries);
  fill(pk);
  return std::string(buffer.data(), buffer.size());
}

void header(Packer& pk, std::string_view type, int version = kVersion) {
  pk.pack(std::string_view("v"));
  pk.pack(version);
  pk.pack(std::string_view("type"));
  pk.pack(type);
  pk.pack(std::string_view("seq"));
  pk.pack(7);
}

std::string error_code_of(const std::string& bytes) {
  try {
    Envelope e = decode(bytes.data(), bytes.size());
    (void)e.body_as<SubmitRequest>();
  } catch (const ProtoError& e) {
    return e.code() + ": " + e.what();
  }
  return "no error";
}

TEST(Proto, ASubmitRoundTripsWithEveryField) {
  SubmitRequest request;
  request.job.name = "heat";
  request.job.user = "ada";
  request.job.kind = "malleable";
  request.job.nodes = 4;
  request.job.min_nodes = 1;
  request.job.max_nodes = 8;
  request.job.node_constraint = "pof2";
  request.job.tasks_per_node = 2;
  request.job.walltime = 3600.5;
  request.job.power_min_w = 150;
  request.job.power_max_w = 250;
  request.job.urgent = true;
  request.job.script = "#!/bin/sh\necho hi\n";
  request.job.workdir = "/tmp";
  request.job.env = {{"A", "1"}, {"B", "two words"}};
  request.job.output = "/tmp/out.txt";
  const std::string bytes = encode_request(type::kSubmit, 42, request);
  const Envelope e = decode(bytes.data(), bytes.size());
  EXPECT_EQ(e.type, "submit");
  EXPECT_EQ(e.seq, 42u);
  EXPECT_FALSE(e.is_reply());
  const auto back = e.body_as<SubmitRequest>();
  EXPECT_EQ(back.job.name, "heat");
  EXPECT_EQ(back.job.kind, "malleable");
  EXPECT_EQ(back.job.nodes, 4);
  EXPECT_EQ(back.job.max_nodes, 8);
  EXPECT_EQ(back.job.node_constraint, "pof2");
  EXPECT_DOUBLE_EQ(back.job.walltime, 3600.5);
  EXPECT_TRUE(back.job.urgent);
  EXPECT_EQ(back.job.script, request.job.script);
  EXPECT_EQ(back.job.env, request.job.env);
  EXPECT_EQ(back.job.output, "/tmp/out.txt");
}

TEST(Proto, RepliesCarryOkAndBodyOrAnError) {
  const std::string ok = encode_reply(type::kSubmit, 3, SubmitReply{17});
  const Envelope a = decode(ok.data(), ok.size());
  ASSERT_TRUE(a.is_reply());
  EXPECT_TRUE(*a.ok);
  EXPECT_EQ(a.body_as<SubmitReply>().id, 17);

  const std::string bad = encode_error(type::kCancel, 4, code::kNotFound, "no job 9");
  const Envelope b = decode(bad.data(), bad.size());
  ASSERT_TRUE(b.is_reply());
  EXPECT_FALSE(*b.ok);
  ASSERT_TRUE(b.error);
  EXPECT_EQ(b.error->code, "not_found");
  EXPECT_EQ(b.error->message, "no job 9");
  EXPECT_EQ(b.seq, 4u);
}

TEST(Proto, OptionalFieldsMayBeAbsentAndNestedListsRoundTrip) {
  JobList list;
  JobInfo job;
  job.id = 5;
  job.state = "RUNNING";
  job.nodelist = {"n1", "n2"};
  job.start_time = 100;
  list.jobs.push_back(job);
  list.jobs.push_back(JobInfo{});
  const std::string bytes = encode_reply(type::kJobsQuery, 1, list);
  const auto back = decode(bytes.data(), bytes.size()).body_as<JobList>();
  ASSERT_EQ(back.jobs.size(), 2u);
  EXPECT_EQ(back.jobs[0].nodelist, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(back.jobs[0].start_time, 100);
  EXPECT_FALSE(back.jobs[0].end_time);
  EXPECT_FALSE(back.jobs[1].start_time);
}

// An MPI expansion's fields (issue 16, docs/protocol.md §8): additive, so
// a message without them still reads, and with them round-trips.
TEST(Proto, AnMpiExpansionsFieldsRoundTripAndMayBeAbsent) {
  AdaptBegin begin;
  begin.job = 3;
  begin.op = "expand";
  begin.old_ranks = {0, 1, -1, -1};
  begin.new_ranks = {0, 1, 2, 3};
  begin.mall_spawn = "mpi";
  begin.hosts = std::vector<std::string>{"n1", "n2", "n3", "n4"};
  std::string bytes = encode_request(type::kAdaptBegin, 1, begin);
  const auto back = decode(bytes.data(), bytes.size()).body_as<AdaptBegin>();
  EXPECT_EQ(back.mall_spawn, "mpi");
  EXPECT_EQ(back.hosts, begin.hosts);
  EXPECT_FALSE(back.launch);

  StepLaunch launch;
  launch.step = 4;
  launch.ranks = {0, 1};
  launch.mall_step = 1;
  launch.mall_ranks = std::vector<int>{2, 3};
  launch.mall_size = 4;
  bytes = encode_request(type::kStepLaunch, 2, launch);
  const auto children = decode(bytes.data(), bytes.size()).body_as<StepLaunch>();
  EXPECT_EQ(children.mall_step, 1);
  EXPECT_EQ(children.mall_ranks, launch.mall_ranks);
  EXPECT_EQ(children.mall_size, 4);
  EXPECT_FALSE(children.mall_spawn);

  bytes = encode_request(type::kStepLaunch, 3, StepLaunch{});
  const auto plain = decode(bytes.data(), bytes.size()).body_as<StepLaunch>();
  EXPECT_FALSE(plain.mall_step);
  EXPECT_FALSE(plain.mall_ranks);
}

TEST(Proto, GarbageIsABadMessage) {
  const std::string garbage = "\xc1\xc1 this is not msgpack";
  EXPECT_EQ(error_code_of(garbage).substr(0, 11), "bad_message");
  EXPECT_EQ(error_code_of("").substr(0, 11), "bad_message");
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack(12);  // a number, not a map
  EXPECT_EQ(error_code_of(std::string(buffer.data(), buffer.size())),
            "bad_message: a message must be a map, got an integer");
}

TEST(Proto, TrailingBytesAreABadMessage) {
  const std::string bytes = encode_request(type::kStats, 1, Empty{}) + "xx";
  EXPECT_EQ(error_code_of(bytes), "bad_message: 2 bytes after the end of the message");
}

TEST(Proto, AnOversizeMessageIsRefusedBeforeDecoding) {
  SubmitRequest request;
  request.job.script.assign(2000, 'x');
  const std::string bytes = encode_request(type::kSubmit, 1, request);
  try {
    decode(bytes.data(), bytes.size(), 1000);
    FAIL() << "no error";
  } catch (const ProtoError& e) {
    EXPECT_EQ(e.code(), "too_large");
    EXPECT_NE(std::string(e.what()).find("over the limit of 1000"), std::string::npos);
  }
}

TEST(Proto, AnotherVersionIsRefused) {
  const std::string bytes = raw_map(3, [](Packer& pk) { header(pk, "stats", 2); });
  EXPECT_EQ(error_code_of(bytes),
            "bad_version: protocol version 2 is not supported (this side speaks 1)");
}

TEST(Proto, MissingAndMistypedEnvelopeFields) {
  const std::string no_type = raw_map(2, [](Packer& pk) {
    pk.pack(std::string_view("v"));
    pk.pack(1);
    pk.pack(std::string_view("seq"));
    pk.pack(1);
  });
  EXPECT_EQ(error_code_of(no_type), "bad_field: type: missing");
  const std::string seq_text = raw_map(3, [](Packer& pk) {
    pk.pack(std::string_view("v"));
    pk.pack(1);
    pk.pack(std::string_view("type"));
    pk.pack(std::string_view("stats"));
    pk.pack(std::string_view("seq"));
    pk.pack(std::string_view("seven"));
  });
  EXPECT_EQ(error_code_of(seq_text), "bad_field: seq: expected an integer, got a string");
}

TEST(Proto, BodyFieldsAreCheckedWithTheirPath) {
  const std::string no_body = raw_map(3, [](Packer& pk) { header(pk, "submit"); });
  EXPECT_EQ(error_code_of(no_body), "bad_field: body: expected a map, got nil");
  const std::string nodes_text = raw_map(4, [](Packer& pk) {
    header(pk, "submit");
    pk.pack(std::string_view("body"));
    pk.pack_map(1);
    pk.pack(std::string_view("job"));
    // Every field right but nodes, which is a string.
    pk.pack_map(16);
    Packer& p = pk;
    p.pack(std::string_view("name"));
    p.pack(std::string_view("x"));
    p.pack(std::string_view("user"));
    p.pack(std::string_view("u"));
    p.pack(std::string_view("kind"));
    p.pack(std::string_view("rigid"));
    p.pack(std::string_view("nodes"));
    p.pack(std::string_view("four"));
    for (const char* key : {"min_nodes", "max_nodes", "tasks_per_node"}) {
      p.pack(std::string_view(key));
      p.pack(1);
    }
    p.pack(std::string_view("node_constraint"));
    p.pack(std::string_view("none"));
    for (const char* key : {"walltime", "power_min_w", "power_max_w"}) {
      p.pack(std::string_view(key));
      p.pack(1.5);
    }
    p.pack(std::string_view("urgent"));
    p.pack(false);
    for (const char* key : {"script", "workdir"}) {
      p.pack(std::string_view(key));
      p.pack(std::string_view("s"));
    }
    p.pack(std::string_view("env"));
    p.pack_map(0);
    p.pack(std::string_view("output"));
    p.pack_nil();
  });
  EXPECT_EQ(error_code_of(nodes_text),
            "bad_field: body.job.nodes: expected an integer, got a string");
}

struct Numbers {
  int small = 0;
  std::uint64_t count = 0;
  double seconds = 0;
  template <class V>
  void fields(V& v) {
    v("small", small);
    v("count", count);
    v("seconds", seconds);
  }
};

TEST(Proto, NumbersAreCheckedByKind) {
  const auto read = [](auto fill) {
    msgpack::sbuffer buffer;
    Packer pk(buffer);
    pk.pack_map(3);
    fill(pk);
    const auto handle = msgpack::unpack(buffer.data(), buffer.size());
    return read_body<Numbers>(handle.get());
  };
  // An integer is a fine double.
  const Numbers ok = read([](Packer& pk) {
    pk.pack(std::string_view("small"));
    pk.pack(-3);
    pk.pack(std::string_view("count"));
    pk.pack(5);
    pk.pack(std::string_view("seconds"));
    pk.pack(60);
  });
  EXPECT_EQ(ok.small, -3);
  EXPECT_DOUBLE_EQ(ok.seconds, 60);
  // A float is not an integer; a negative count is refused; so is overflow.
  EXPECT_THROW(read([](Packer& pk) {
                 pk.pack(std::string_view("small"));
                 pk.pack(1.5);
                 pk.pack(std::string_view("count"));
                 pk.pack(5);
                 pk.pack(std::string_view("seconds"));
                 pk.pack(1);
               }),
               ProtoError);
  EXPECT_THROW(read([](Packer& pk) {
                 pk.pack(std::string_view("small"));
                 pk.pack(1);
                 pk.pack(std::string_view("count"));
                 pk.pack(-5);
                 pk.pack(std::string_view("seconds"));
                 pk.pack(1);
               }),
               ProtoError);
  EXPECT_THROW(read([](Packer& pk) {
                 pk.pack(std::string_view("small"));
                 pk.pack(std::int64_t{1} << 40);
                 pk.pack(std::string_view("count"));
                 pk.pack(5);
                 pk.pack(std::string_view("seconds"));
                 pk.pack(1);
               }),
               ProtoError);
}

TEST(Proto, UnknownFieldsAreIgnored) {
  const std::string bytes = raw_map(5, [](Packer& pk) {
    header(pk, "cancel");
    pk.pack(std::string_view("body"));
    pk.pack_map(2);
    pk.pack(std::string_view("id"));
    pk.pack(9);
    pk.pack(std::string_view("from_the_future"));
    pk.pack(true);
    pk.pack(std::string_view("extra"));
    pk.pack(1);
  });
  EXPECT_EQ(decode(bytes.data(), bytes.size()).body_as<JobRef>().id, 9);
}

TEST(Proto, DeepNestingIsABadMessage) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  for (int i = 0; i < 100; ++i) pk.pack_array(1);
  pk.pack(1);
  const std::string bytes(buffer.data(), buffer.size());
  EXPECT_EQ(error_code_of(bytes).substr(0, 11), "bad_message");
}

}  // namespace
}  // namespace sched::proto
