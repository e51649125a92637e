#pragma once
//! \file
//! Frame decoding is open: a codec registers the decoder of the frames it writes under its frame id (the
//! header's codec byte), and compress::decode dispatches on that id. So a program decodes the codecs it includes
//! and links nothing else: the int8, sparse or low-rank frames of a compressed collective need neither zstd nor
//! lz4, and a codec a user writes decodes beside the built-in ones.
//!
//!   inline constexpr auto my_frames = compress::frame_decoder_of<&decode_mine>("mine");   // compress/user_codec.hpp
//!   inline const bool my_frames_registered = compress::register_frame_decoder(compress::codec{200}, my_frames);
//!
//! Ids 1-10 are the built-in codecs' (compress::codec); a user codec takes one from first_user_codec_id (128) to
//! 255. A codec
//! header registers from an inline variable's initializer, before main. Registering after threads decode is
//! safe (the table is atomic) but a frame decoded before its codec registered was refused.

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <trinity/compress/element.hpp>
#include <trinity/compress/traits.hpp>

namespace trinity::compress {

struct frame_view;
class decode_context;
namespace detail {
struct nested_decoder;
}

//! Reads one frame's body into `out` (out.size() is the header's count), as floats (f32) or raw words (word32).
using frame_body_decoder = void (*)(const frame_view&, std::span<float> out, element want, decode_context&,
                                    const detail::nested_decoder&);

//! What a codec registers: its name (in errors and listings) and its body decoder.
struct frame_decoder {
  std::string_view name;
  frame_body_decoder decode = nullptr;
};

//! Frame ids no built-in codec will take: the ones a user codec registers under.
inline constexpr std::uint8_t first_user_codec_id = 128;

namespace detail {
inline std::array<std::atomic<const frame_decoder*>, 256>& frame_decoder_table() noexcept {
  static std::array<std::atomic<const frame_decoder*>, 256> table{};
  return table;
}
}  // namespace detail

//! Registers `d` (an object that outlives every decode: an inline constexpr variable) for frames whose codec
//! byte is `id`. The same object again is a no-op; another decoder for a taken id, id 0 or a null decoder is
//! refused with std::logic_error naming both.
inline bool register_frame_decoder(codec id, const frame_decoder& d) {
  const auto n = static_cast<std::uint8_t>(id);
  if (n == 0 || d.decode == nullptr)
    throw std::logic_error("trinity: register_frame_decoder(" + std::to_string(n) + ", \"" + std::string(d.name) +
                           "\"): " +
                           (n == 0 ? "id 0 is no codec's. Fix: take an id from 128 to 255"
                                   : "the decoder is null. Fix: pass the body decoder"));
  const frame_decoder* expected = nullptr;
  auto& slot = detail::frame_decoder_table()[n];
  if (!slot.compare_exchange_strong(expected, &d, std::memory_order_acq_rel) && expected != &d)
    throw std::logic_error("trinity: frame id " + std::to_string(n) + " is taken by \"" + std::string(expected->name) +
                           "\"; \"" + std::string(d.name) +
                           "\" cannot register under it. Fix: give the codec a free id from 128 to 255");
  return true;
}

//! The decoder registered for `id`, or nullptr when no codec this program includes writes it.
[[nodiscard]] inline const frame_decoder* registered_frame_decoder(codec id) noexcept {
  return detail::frame_decoder_table()[static_cast<std::uint8_t>(id)].load(std::memory_order_acquire);
}

//! Why frames of `id` cannot be decoded here: a built-in codec that was not included says which header and
//! target bring it; any other id is not a codec.
[[nodiscard]] inline std::string unregistered_codec_problem(std::uint8_t id) {
  const auto c = static_cast<codec>(id);
  const std::string n = std::to_string(id);
  if (c == codec::zstd || c == codec::lz4 || c == codec::delta)
    return n + " (" + std::string(to_string(c)) + ") is a codec this program does not include. Fix: include " +
           "<trinity/compress/lossless/" + std::string(to_string(c)) +
           ".hpp> (or <trinity/compress.hpp>) and link trinity::compress, which brings zstd and lz4";
  if (to_string(c) != "unknown")
    return n + " (" + std::string(to_string(c)) + ") is a codec this program does not include. Fix: include " +
           "<trinity/compress/decode.hpp>";
  return n + " is not a codec this decoder knows";
}

}  // namespace trinity::compress
