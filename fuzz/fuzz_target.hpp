// The one entry point every fuzz target defines (libFuzzer's). With
// SCHED_FUZZ=ON (clang) the target links libFuzzer, which calls it with
// mutated inputs; otherwise it links replay_main.cpp, which calls it once per
// file of a corpus, so the corpus (and any crash reproducer added to it) is a
// regression test of the ordinary build.
//
// The rule of every target: input of any shape may be refused with the
// reader's documented error, never with another exception, a crash or a hang.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
