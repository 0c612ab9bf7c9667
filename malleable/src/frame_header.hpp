// The first frame of a rank-to-rank data message; the second is the data.
//
//   magic "SMD1" | epoch u32 | from rank u32 | seq u64     (20 bytes, big-endian)
//
// seq counts the messages from one rank to another within one epoch (0, 1,
// ...), so the receiver can hand them out in order whatever arrives first.
// The epoch is the process set's generation: adaptations will advance it so
// that ranks of different sets are not confused.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace sched::mall {

struct FrameHeader {
  std::uint32_t epoch = 0;
  int from = 0;
  std::uint64_t seq = 0;
};

inline constexpr std::size_t kFrameHeaderBytes = 20;

std::array<unsigned char, kFrameHeaderBytes> encode_frame_header(const FrameHeader& header);
// Nothing when the bytes are not a header (wrong size or magic).
std::optional<FrameHeader> decode_frame_header(const void* data, std::size_t size);

}  // namespace sched::mall
