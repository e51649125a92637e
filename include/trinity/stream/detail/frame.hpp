#pragma once
//! \file
//! The one frame stream:: sends, in either direction: a fixed 40-byte header,
//! little-endian whatever the host, then (for data) the sample's bytes, or (for a
//! batch) several samples of consecutive offsets, each its u32 length then its bytes.
//!
//!   byte 0      kind (data, hello, state, batch)
//!   byte 1      wire version
//!   bytes 2–3   zero
//!   bytes 4–7   producer id
//!   bytes 8–39  four u64 fields, by kind:
//!     data   offset, 0, 0, 0
//!     batch  first offset, count, 0, 0   (count ≥ 2 samples: offsets first .. first + count - 1)
//!     hello  acked, 0, 0, 0   (a producer asks where it stands, and says what it saw acknowledged)
//!     state  acked, received, epoch, window   (flags in byte 2: bit 0 = a reply to hello)
//!
//! A batch is how small samples travel: one message, one system call and one
//! acknowledgement round for many. Version 2 added it; a version-1 peer's frames
//! are refused, not misread.
//!
//! A frame comes off the network, so decode() and batch_samples() trust none of
//! it: a short frame, an unknown kind or version, nonzero reserved bytes, or a
//! batch whose lengths do not fill its body exactly decode to nothing, and the
//! receiver counts it and drops it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace trinity::stream::detail {

enum class frame_kind : std::uint8_t { data = 1, hello = 2, state = 3, batch = 4 };

inline constexpr std::uint8_t wire_version = 2;
inline constexpr std::size_t header_bytes = 40;
inline constexpr std::size_t length_bytes = 4;           //!< a batched sample's length prefix
inline constexpr std::uint64_t max_batch_count = 65536;  //!< most samples one batch may carry
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
  if (kind < 1 || kind > 4) return std::nullopt;
  if (static_cast<std::uint8_t>(bytes[1]) != wire_version) return std::nullopt;
  frame_header h;
  h.kind = static_cast<frame_kind>(kind);
  h.flags = static_cast<std::uint8_t>(bytes[2]);
  if (bytes[3] != std::byte{0}) return std::nullopt;
  // Only a state carries flags; hello and state carry no payload.
  if (h.kind != frame_kind::state && h.flags != 0) return std::nullopt;
  if ((h.flags & ~flag_reply_to_hello) != 0) return std::nullopt;
  const bool carries = h.kind == frame_kind::data || h.kind == frame_kind::batch;
  if (!carries && bytes.size() != header_bytes) return std::nullopt;
  h.producer = load_u32(bytes.data() + 4);
  for (std::size_t i = 0; i < h.field.size(); ++i) h.field[i] = load_u64(bytes.data() + 8 + 8 * i);
  if (h.kind == frame_kind::batch) {
    const std::uint64_t first = h.field[0], count = h.field[1];
    if (count < 2 || count > max_batch_count || first > UINT64_MAX - count) return std::nullopt;
    if (h.field[2] != 0 || h.field[3] != 0) return std::nullopt;
    if (bytes.size() - header_bytes < count * length_bytes) return std::nullopt;
  }
  return h;
}

//! Where each sample of a batch frame lies in it: (start, size) pairs, in offset order; nothing when the
//! lengths do not fill the body exactly. `h` is the frame's decoded header.
inline std::optional<std::vector<std::pair<std::size_t, std::size_t>>> batch_samples(std::span<const std::byte> frame,
                                                                                     const frame_header& h) {
  if (h.kind != frame_kind::batch || frame.size() < header_bytes) return std::nullopt;
  std::vector<std::pair<std::size_t, std::size_t>> at;
  at.reserve(static_cast<std::size_t>(h.field[1]));
  std::size_t pos = header_bytes;
  for (std::uint64_t i = 0; i < h.field[1]; ++i) {
    if (frame.size() - pos < length_bytes) return std::nullopt;
    const std::size_t n = load_u32(frame.data() + pos);
    pos += length_bytes;
    if (frame.size() - pos < n) return std::nullopt;
    at.emplace_back(pos, n);
    pos += n;
  }
  if (pos != frame.size()) return std::nullopt;
  return at;
}

}  // namespace trinity::stream::detail
