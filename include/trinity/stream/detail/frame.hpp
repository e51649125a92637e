#pragma once
//! \file
//! The one frame stream:: sends, in either direction: a fixed 40-byte header,
//! little-endian whatever the host, then (for data) the sample's bytes.
//!
//!   byte 0      kind (data, hello, state)
//!   byte 1      wire version
//!   bytes 2–3   zero
//!   bytes 4–7   producer id
//!   bytes 8–39  four u64 fields, by kind:
//!     data   offset, 0, 0, 0
//!     hello  acked, 0, 0, 0   (a producer asks where it stands, and says what it saw acknowledged)
//!     state  acked, received, epoch, window   (flags in byte 2: bit 0 = a reply to hello)
//!
//! A frame comes off the network, so decode() trusts none of it: a short frame,
//! an unknown kind or version, or nonzero reserved bytes decode to nothing, and
//! the receiver counts it and drops it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace trinity::stream::detail {

enum class frame_kind : std::uint8_t { data = 1, hello = 2, state = 3 };

inline constexpr std::uint8_t wire_version = 1;
inline constexpr std::size_t header_bytes = 40;
inline constexpr std::uint8_t flag_reply_to_hello = 1;

struct frame_header {
  frame_kind kind = frame_kind::data;
  std::uint8_t flags = 0;
  std::uint32_t producer = 0;
  std::array<std::uint64_t, 4> field{};  //!< by kind, as the file comment lays out
};

inline void store_u32(std::byte* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}
inline void store_u64(std::byte* p, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}
inline std::uint32_t load_u32(const std::byte* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}
inline std::uint64_t load_u64(const std::byte* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

//! Writes h into the first header_bytes of out (which must hold them).
inline void encode(const frame_header& h, std::span<std::byte, header_bytes> out) noexcept {
  out[0] = static_cast<std::byte>(h.kind);
  out[1] = static_cast<std::byte>(wire_version);
  out[2] = static_cast<std::byte>(h.flags);
  out[3] = std::byte{0};
  store_u32(out.data() + 4, h.producer);
  for (std::size_t i = 0; i < h.field.size(); ++i) store_u64(out.data() + 8 + 8 * i, h.field[i]);
}

//! The header at the front of bytes, or nothing when the bytes are not a frame this version sent.
inline std::optional<frame_header> decode(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < header_bytes) return std::nullopt;
  const auto kind = static_cast<std::uint8_t>(bytes[0]);
  if (kind < 1 || kind > 3) return std::nullopt;
  if (static_cast<std::uint8_t>(bytes[1]) != wire_version) return std::nullopt;
  frame_header h;
  h.kind = static_cast<frame_kind>(kind);
  h.flags = static_cast<std::uint8_t>(bytes[2]);
  if (bytes[3] != std::byte{0}) return std::nullopt;
  // Only a state carries flags; hello and state carry no payload.
  if (h.kind != frame_kind::state && h.flags != 0) return std::nullopt;
  if ((h.flags & ~flag_reply_to_hello) != 0) return std::nullopt;
  if (h.kind != frame_kind::data && bytes.size() != header_bytes) return std::nullopt;
  h.producer = load_u32(bytes.data() + 4);
  for (std::size_t i = 0; i < h.field.size(); ++i) h.field[i] = load_u64(bytes.data() + 8 + 8 * i);
  return h;
}

}  // namespace trinity::stream::detail
