#include "frame_header.hpp"

#include <limits>

namespace sched::mall {
namespace {

constexpr std::uint32_t kMagic = 0x534d4431;  // "SMD1"

template <class Int>
void put(unsigned char* out, Int value) {
  for (std::size_t i = 0; i < sizeof(Int); ++i) {
    out[i] = static_cast<unsigned char>(value >> (8 * (sizeof(Int) - 1 - i)));
  }
}

template <class Int>
Int get(const unsigned char* in) {
  Int value = 0;
  for (std::size_t i = 0; i < sizeof(Int); ++i) value = static_cast<Int>((value << 8) | in[i]);
  return value;
}

}  // namespace

std::array<unsigned char, kFrameHeaderBytes> encode_frame_header(const FrameHeader& header) {
  std::array<unsigned char, kFrameHeaderBytes> out{};
  put<std::uint32_t>(out.data(), kMagic);
  put<std::uint32_t>(out.data() + 4, header.epoch);
  put<std::uint32_t>(out.data() + 8, static_cast<std::uint32_t>(header.from));
  put<std::uint64_t>(out.data() + 12, header.seq);
  return out;
}

std::optional<FrameHeader> decode_frame_header(const void* data, std::size_t size) {
  const auto* in = static_cast<const unsigned char*>(data);
  if (size != kFrameHeaderBytes || get<std::uint32_t>(in) != kMagic) return std::nullopt;
  const auto from = get<std::uint32_t>(in + 8);
  if (from > static_cast<std::uint32_t>(std::numeric_limits<int>::max())) return std::nullopt;
  FrameHeader header;
  header.epoch = get<std::uint32_t>(in + 4);
  header.from = static_cast<int>(from);
  header.seq = get<std::uint64_t>(in + 12);
  return header;
}

}  // namespace sched::mall
