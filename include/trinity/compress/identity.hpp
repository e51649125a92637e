#pragma once
//! \file
//! identity: the frame carries the floats as they are. It is the baseline
//! every other codec must beat end to end, and what the chooser picks when
//! compression does not pay.

#include <cstring>
#include <span>

#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

struct identity {
  using compressor_concept = compressor_tag;
  static constexpr compressor_traits traits{.name = "identity",
                                            .wire_codec = codec::identity,
                                            .role = role::values,
                                            .error = {error_kind::exact, 0.0},
                                            .summable = true,
                                            .expected_ratio = 1.0};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) const {
    detail::require_residual_size(in.size(), residual.size());
    const std::size_t at = detail::begin_frame(out, codec::identity, element::f32, in.size());
    out.append(std::as_bytes(in));
    detail::finish_frame(out, at);
    for (float& r : residual) r = 0.0f;
  }

  //! f32 and word32 bodies are both 4 bytes per element, copied bit for bit.
  static void decode_body(const frame_view& f, std::span<float> out, element want) {
    if (f.header.element != want)
      detail::fail("header.element", std::string(to_string(f.header.element)) + " where " +
                                         std::string(to_string(want)) + " was expected");
    detail::require_body_size(f, detail::checked_mul(out.size(), 4, "header.count"), "identity");
    if (!out.empty()) std::memcpy(out.data(), f.body.data(), out.size_bytes());
  }
};

namespace detail {
//! identity frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder identity_frames{"identity", &decode_with<&identity::decode_body>};
inline const bool identity_frames_registered = register_frame_decoder(codec::identity, identity_frames);
}  // namespace detail

}  // namespace trinity::compress
