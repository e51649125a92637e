#include "codec_reference.hpp"

#include <trinity/compress/cast.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/wire.hpp>

namespace trinity::testing {

std::vector<std::byte> cpu_frame(cpu_codec c, const std::vector<float>& x) {
  compress::frame_buffer f;
  if (c == cpu_codec::bf16) compress::bf16{}.encode(x, f);
  else compress::int8{}.encode(x, f);
  return {f.bytes().begin(), f.bytes().end()};
}

std::vector<std::byte> body_of(const std::vector<std::byte>& frame) {
  return {frame.begin() + static_cast<std::ptrdiff_t>(compress::header_size), frame.end()};
}

std::vector<float> cpu_decode(const std::vector<std::byte>& frame) { return compress::decode(frame); }

}  // namespace trinity::testing
