#pragma once
//! \file
//! What zstd and lz4 share: a lossless stage's frame holds either raw 4-byte
//! elements (it compressed the floats themselves) or another frame (it wraps a
//! lossy stage's output). params[0..1] carry the decompressed size, so the
//! decoder knows what it will allocate before it inflates anything.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/wire.hpp>

namespace trinity::compress::detail {

inline std::array<std::uint32_t, 4> raw_size_params(std::uint64_t raw) {
  return {static_cast<std::uint32_t>(raw), static_cast<std::uint32_t>(raw >> 32), 0, 0};
}

//! Checks a byte stage's header and says where the raw bytes go: straight
//! into `out` for raw elements, into a charged scratch buffer for a frame.
struct byte_stage_plan {
  std::uint64_t raw_size;
  bool nested;
};

inline byte_stage_plan plan_byte_stage(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                                       const char* name) {
  const std::uint64_t raw = f.header.params[0] | (std::uint64_t{f.header.params[1]} << 32);
  if (f.header.params[2] != 0 || f.header.params[3] != 0)
    fail(std::string(name) + ".params", "params[2] and params[3] must be 0 in version 1");
  require_count(f.header, out.size(), "header.count");
  if (f.header.element == element::frame) {
    if (raw < header_size)
      fail(std::string(name) + ".raw_size",
           std::to_string(raw) + " bytes cannot hold a nested frame's " + std::to_string(header_size) + "-byte header");
    ctx.charge(raw, 1, "header.params.raw_size");
    return {raw, true};
  }
  if (f.header.element != want)
    fail("header.element", std::string(to_string(f.header.element)) + " where " + std::string(to_string(want)) +
                               " or a nested frame was expected");
  if (raw != checked_mul(out.size(), 4, "header.count"))
    fail(std::string(name) + ".raw_size",
         std::to_string(raw) + " bytes for " + std::to_string(out.size()) + " four-byte elements");
  return {raw, false};
}

//! After inflating: a nested frame is decoded one level down; raw elements are already in place.
template <class Inflate>
void finish_byte_stage(const byte_stage_plan& plan, std::span<float> out, element want, const nested_decoder& nested,
                       Inflate&& inflate) {
  if (!plan.nested) {
    inflate(reinterpret_cast<std::byte*>(out.data()), plan.raw_size);
    return;
  }
  auto scratch = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(plan.raw_size));
  inflate(scratch.get(), plan.raw_size);
  nested({scratch.get(), static_cast<std::size_t>(plan.raw_size)}, out, want);
}

}  // namespace trinity::compress::detail
