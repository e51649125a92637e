#pragma once
//! \file
//! delta<Lossless, KeyEvery>: the temporal delta encoder for feature streams,
//! the paper's edge video-analytics case (§3.2): consecutive frames of a
//! camera's features differ little, so each frame is sent as its XOR against
//! the previous one (bit-exact, unlike a float subtraction), its bytes
//! regrouped into four planes so the lossless stage sees the long runs of
//! equal sign and exponent bytes, then compressed by `Lossless`. A key frame
//! (XOR against zero) starts the stream, follows a change of size, and comes
//! every KeyEvery frames when KeyEvery > 0, so a receiver that lost a frame
//! can rejoin.
//!
//! Lossless end to end, NaN payloads included. The decoder is stateful too:
//! decode a stream with one compress::decoder, which refuses a delta frame
//! that does not follow the frame it saw last.
//!
//! Wire: params = {frame index (low, high), 1 for a key frame else 0, 0};
//! body: one frame (element word32, count n) of the shuffled XOR words.

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/compress/lossless/zstd.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

namespace detail {
//! Byte b of word i goes to plane b, position i.
inline void shuffle_words(const std::uint32_t* w, std::size_t n, std::byte* planes) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = w[i];
    planes[i] = static_cast<std::byte>(v);
    planes[n + i] = static_cast<std::byte>(v >> 8);
    planes[2 * n + i] = static_cast<std::byte>(v >> 16);
    planes[3 * n + i] = static_cast<std::byte>(v >> 24);
  }
}
inline void unshuffle_words(const std::byte* planes, std::size_t n, std::uint32_t* w) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    w[i] = std::to_integer<std::uint32_t>(planes[i]) | std::to_integer<std::uint32_t>(planes[n + i]) << 8 |
           std::to_integer<std::uint32_t>(planes[2 * n + i]) << 16 |
           std::to_integer<std::uint32_t>(planes[3 * n + i]) << 24;
}
}  // namespace detail

template <class Lossless = zstd<1>, std::uint32_t KeyEvery = 0>
class delta {
  static_assert(Lossless::traits.role == role::bytes,
                "trinity: delta<Lossless> needs a lossless byte stage (zstd<>, lz4<>) to compress the residuals");

 public:
  using compressor_concept = compressor_tag;
  // 1.0 before calibration: the gain depends on how alike the frames are, not on the codec.
  static constexpr compressor_traits traits{.name = "delta",
                                            .wire_codec = codec::delta,
                                            .role = role::values,
                                            .error = {error_kind::exact, 0.0},
                                            .stateful = true,
                                            .needs_dense = true,
                                            .expected_ratio = 1.0};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    const std::size_t n = in.size();
    const bool key = !started_ || previous_.size() != n || (KeyEvery > 0 && frame_ % KeyEvery == 0);
    words_.resize(n);
    for (std::size_t i = 0; i < n; ++i) words_[i] = std::bit_cast<std::uint32_t>(in[i]) ^ (key ? 0u : previous_[i]);
    planes_.resize(4 * n);
    detail::shuffle_words(words_.data(), n, planes_.data());
    const std::size_t at = detail::begin_frame(
        out, codec::delta, element::f32, n,
        {static_cast<std::uint32_t>(frame_), static_cast<std::uint32_t>(frame_ >> 32), key ? 1u : 0u, 0});
    lossless_.wrap(planes_, out, element::word32, n);
    detail::finish_frame(out, at);
    previous_.resize(n);
    for (std::size_t i = 0; i < n; ++i) previous_[i] = std::bit_cast<std::uint32_t>(in[i]);
    started_ = true;
    ++frame_;
    std::fill(residual.begin(), residual.end(), 0.0f);
  }

  //! Makes the next frame a key frame (a receiver joined or lost a frame).
  void restart() noexcept { started_ = false; }
  [[nodiscard]] std::uint64_t frames_sent() const noexcept { return frame_; }

 private:
  Lossless lossless_;
  std::vector<std::uint32_t> previous_, words_;
  std::vector<std::byte> planes_;
  std::uint64_t frame_ = 0;
  bool started_ = false;
};

namespace detail {
inline void decode_delta_body(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                              const nested_decoder& nested) {
  if (want != element::f32 || f.header.element != element::f32) fail("header.element", "a delta frame decodes to f32");
  const std::uint64_t index = f.header.params[0] | (std::uint64_t{f.header.params[1]} << 32);
  const std::uint32_t key = f.header.params[2];
  if (key > 1) fail("delta.key", std::to_string(key) + " is not 0 (delta) or 1 (key frame)");
  if (f.header.params[3]) fail("delta.params", "params[3] must be 0");
  delta_state* state = ctx.stream();
  if (!key) {
    if (!state)
      fail("delta.key", "frame " + std::to_string(index) +
                            " is a delta against the previous frame; decode the stream with one compress::decoder");
    if (!state->started)
      fail("delta.key", "frame " + std::to_string(index) +
                            " is a delta, but this stream has no key frame yet; ask the sender to restart()");
    if (index != state->next_frame)
      fail("delta.frame", "frame " + std::to_string(index) + " does not follow frame " +
                              std::to_string(state->next_frame - 1) + "; ask the sender for a key frame (restart())");
    if (state->previous.size() != out.size())
      fail("header.count",
           std::to_string(out.size()) + " elements after a frame of " + std::to_string(state->previous.size()));
  }
  const std::size_t n = out.size();
  ctx.charge(n, 8, "header.count");
  auto planes = std::make_unique_for_overwrite<float[]>(n);
  nested(f.body, {planes.get(), n}, element::word32);
  std::vector<std::uint32_t> words(n);
  unshuffle_words(reinterpret_cast<const std::byte*>(planes.get()), n, words.data());
  if (!key)
    for (std::size_t i = 0; i < n; ++i) words[i] ^= state->previous[i];
  for (std::size_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(words[i]);
  // Only a frame that decoded whole moves the stream on.
  if (state) {
    state->previous = std::move(words);
    state->next_frame = index + 1;
    state->started = true;
  }
}
}  // namespace detail

namespace detail {
//! delta frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder delta_frames{"delta", &decode_with<&decode_delta_body>};
inline const bool delta_frames_registered = register_frame_decoder(codec::delta, delta_frames);
}  // namespace detail

}  // namespace trinity::compress
