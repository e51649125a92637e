#pragma once
// The CPU codecs' frames, built by the host compiler (codec_reference.cpp) so that nvcc never parses the
// compress headers: what the GPU kernels must reproduce byte for byte.
#include <cstddef>
#include <vector>

namespace trinity::testing {
enum class cpu_codec { bf16, int8 };
//! The whole frame compress::bf16 / compress::int8 writes for x.
std::vector<std::byte> cpu_frame(cpu_codec c, const std::vector<float>& x);
//! The frame's body: what follows its header.
std::vector<std::byte> body_of(const std::vector<std::byte>& frame);
//! compress::decode of a frame.
std::vector<float> cpu_decode(const std::vector<std::byte>& frame);
}  // namespace trinity::testing
