#pragma once
//! \file
//! A codec of one's own whose frames decode beside the built-in ones: its body decoder made the registry's
//! frame_decoder, under a frame id from first_user_codec_id (128) to 255, registered before main from an inline
//! variable's initializer (compress/frame_decoders.hpp holds the registry).
//!
//!   void decode_mine(const compress::frame_view& f, std::span<float> out, compress::element want);
//!   inline constexpr auto mine_frames = compress::frame_decoder_of<&decode_mine>("mine");
//!   inline const bool mine_registered = compress::register_frame_decoder(compress::codec{200}, mine_frames);

#include <string_view>

#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/frame_decoders.hpp>

namespace trinity::compress {

//! The frame_decoder of `Body`, a function void(const frame_view&, std::span<float> out, element want) (or one
//! that also takes the decode_context&): what register_frame_decoder takes, named `name` in errors.
template <auto Body>
[[nodiscard]] constexpr frame_decoder frame_decoder_of(std::string_view name) noexcept {
  return {name, &detail::decode_with<Body>};
}

}  // namespace trinity::compress
