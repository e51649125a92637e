#pragma once
//! \file
//! Signed quantization levels on the wire, shared by the absmax quantizer and
//! QSGD: int8 one per byte, or int4 two per byte, low nibble first.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trinity::compress::detail {

//! Bytes of n levels at `bits` (8 or 4) bits each.
constexpr std::uint64_t level_bytes(std::uint64_t n, unsigned bits) { return bits == 8 ? n : n / 2 + n % 2; }

//! Writes len levels starting at element `lo` (even when bits is 4, so a run starts on a byte).
inline void store_levels(std::byte* values, std::size_t lo, const std::int8_t* q, std::size_t len, unsigned bits) {
  if (bits == 8) {
    std::memcpy(values + lo, q, len);
    return;
  }
  std::byte* v = values + lo / 2;
  for (std::size_t j = 0; j + 1 < len; j += 2)
    v[j / 2] = static_cast<std::byte>((q[j] & 0x0f) | ((q[j + 1] & 0x0f) << 4));
  if (len % 2) v[len / 2] = static_cast<std::byte>(q[len - 1] & 0x0f);
}

//! The level of element i.
inline int load_level(const std::byte* values, std::size_t i, unsigned bits) {
  if (bits == 8) return static_cast<std::int8_t>(std::to_integer<std::uint8_t>(values[i]));
  const int nib = (std::to_integer<int>(values[i / 2]) >> (4 * (i % 2))) & 0x0f;
  return nib >= 8 ? nib - 16 : nib;
}

}  // namespace trinity::compress::detail
