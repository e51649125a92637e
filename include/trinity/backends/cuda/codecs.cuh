#pragma once
//! \file
//! Gradient codecs as GPU kernels: the bodies of compress::bf16 and
//! compress::int8 (quantize<8, 128>) written straight from device memory, bit
//! for bit what the CPU codecs write (tests/cuda/codecs_test.cu holds them to
//! it), so a frame encoded on a GPU decodes with compress::decode anywhere.
//! On a GPU these codecs run near HBM bandwidth, hundreds of times a CPU core's
//! rate: that is what decides whether compressing before a 50 GB/s link pays
//! (bench/cuda_codecs.cu measures them; plan::gpu_codecs carries the figures).
//!
//!   cuda::int8_encode(d_grad, n, d_body, stream);   // body: ceil(n/128) fp32 scales, then n int8
//!   cuda::int8_decode(d_body, n, d_out, stream);
//!
//! Bodies only: the frame header (compress/wire.hpp) is 56 bytes the host
//! writes. Non-finite input is the caller's to refuse, as compress::int8 does
//! before it encodes: here a block with a NaN or infinity gets scale 0.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <trinity/backends/cuda/backend.cuh>

namespace trinity::cuda {

//! Elements per int8 block: compress::int8's Block.
inline constexpr std::size_t int8_block = 128;

[[nodiscard]] constexpr std::size_t int8_body_bytes(std::size_t n) noexcept {
  return (n + int8_block - 1) / int8_block * 4 + n;
}

namespace kernels {

__device__ inline std::uint16_t to_bf16(float f) {
  std::uint32_t x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

__global__ void bf16_encode(const float* __restrict__ in, std::uint16_t* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = to_bf16(in[i]);
}

__global__ void bf16_decode(const std::uint16_t* __restrict__ in, float* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __uint_as_float(static_cast<std::uint32_t>(in[i]) << 16);
}

// Four elements a thread, 16-byte loads and 8-byte stores (or the reverse): a 2-byte access per thread
// leaves a third of HBM's bandwidth unused. Callers pass 16-byte aligned pointers and n / 4 groups.
__global__ void bf16_encode4(const float4* __restrict__ in, uint2* __restrict__ out, std::size_t groups) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < groups;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = in[i];
    out[i] = make_uint2(static_cast<std::uint32_t>(to_bf16(v.x)) | static_cast<std::uint32_t>(to_bf16(v.y)) << 16,
                        static_cast<std::uint32_t>(to_bf16(v.z)) | static_cast<std::uint32_t>(to_bf16(v.w)) << 16);
  }
}
__global__ void bf16_decode4(const uint2* __restrict__ in, float4* __restrict__ out, std::size_t groups) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < groups;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint2 h = in[i];
    out[i] = make_float4(__uint_as_float(h.x << 16), __uint_as_float(h.x & 0xffff0000u), __uint_as_float(h.y << 16),
                         __uint_as_float(h.y & 0xffff0000u));
  }
}

// One warp per 128-element block, four elements a lane. The rounding is compress::detail::quantize_block's,
// operation for operation (no fused multiply-add), so the bytes match the CPU's.
__global__ void int8_encode(const float* __restrict__ in, std::size_t n, float* __restrict__ scales,
                            std::int8_t* __restrict__ values, bool vector_ok) {
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  const std::size_t blocks = (n + int8_block - 1) / int8_block;
  const unsigned lane = threadIdx.x % 32;
  for (std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x / 32) + threadIdx.x / 32; b < blocks;
       b += warps) {
    const std::size_t lo = b * int8_block;
    const std::size_t len = n - lo < int8_block ? n - lo : int8_block;
    // Lane l holds elements 4l..4l+3: one 16-byte load and one 4-byte store each, when the block is whole.
    float x[4];
    std::uint32_t amax = 0;
    const bool whole = len == int8_block && vector_ok;
    if (whole) {
      const float4 v = reinterpret_cast<const float4*>(in + lo)[lane];
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
      for (int k = 0; k < 4; ++k) {
        const std::size_t j = 4u * lane + static_cast<unsigned>(k);
        x[k] = j < len ? in[lo + j] : 0.0f;
      }
    }
    for (int k = 0; k < 4; ++k) amax = max(amax, __float_as_uint(x[k]) & 0x7fffffffu);
    for (int off = 16; off > 0; off /= 2) amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    const float a = __uint_as_float(amax);
    const bool bad = amax >= 0x7f800000u || a > 3.40282347e38f / 2;
    const float scale = bad || amax == 0 ? 0.0f : __fdiv_rn(a, 127.0f);
    if (lane == 0) scales[b] = scale;
    std::int8_t q[4];
    for (int k = 0; k < 4; ++k) {
      int v = 0;
      if (!bad && amax != 0) {
        if (a >= 1e-30f) {
          const float r = __fmul_rn(x[k], __fdiv_rn(127.0f, a));
          v = static_cast<int>(__fadd_rn(r, r >= 0.0f ? 0.5f : -0.5f));
        } else {
          v = static_cast<int>(lround(static_cast<double>(x[k]) * (127.0 / static_cast<double>(a))));
        }
        v = min(max(v, -127), 127);
      }
      q[k] = static_cast<std::int8_t>(v);
    }
    if (whole) {
      reinterpret_cast<char4*>(values + lo)[lane] = make_char4(q[0], q[1], q[2], q[3]);
    } else {
      for (int k = 0; k < 4; ++k)
        if (4u * lane + static_cast<unsigned>(k) < len) values[lo + 4u * lane + static_cast<unsigned>(k)] = q[k];
    }
  }
}

// Elements [begin, end), one a thread.
__global__ void int8_decode(const float* __restrict__ scales, const std::int8_t* __restrict__ values, std::size_t begin,
                            std::size_t end, float* __restrict__ out) {
  for (std::size_t i = begin + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < end;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __fmul_rn(static_cast<float>(values[i]), scales[i / int8_block]);
}
// Four elements a thread: a 4-byte load of levels, a 16-byte store of floats (groups of 4 never straddle a block).
__global__ void int8_decode4(const float* __restrict__ scales, const char4* __restrict__ values, std::size_t groups,
                             float4* __restrict__ out) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < groups;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const char4 q = values[i];
    const float s = scales[i * 4 / int8_block];
    out[i] = make_float4(__fmul_rn(static_cast<float>(q.x), s), __fmul_rn(static_cast<float>(q.y), s),
                         __fmul_rn(static_cast<float>(q.z), s), __fmul_rn(static_cast<float>(q.w), s));
  }
}

}  // namespace kernels

namespace detail {
inline bool aligned(const void* p, std::size_t to) noexcept { return reinterpret_cast<std::uintptr_t>(p) % to == 0; }

// Enough blocks to fill the GPU several times over; the loops stride over the rest.
inline unsigned grid_for(std::size_t work, unsigned per_block) {
  const std::size_t want = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(want < 65535 * 8 ? (want ? want : 1) : 65535 * 8);
}
}  // namespace detail

//! bf16 body: n 16-bit values. in and out are device pointers.
inline void bf16_encode(const float* in, std::size_t n, std::byte* out, cudaStream_t s = nullptr) {
  if (n == 0) return;
  const std::size_t groups = detail::aligned(in, 16) && detail::aligned(out, 8) ? n / 4 : 0;
  if (groups)
    kernels::bf16_encode4<<<detail::grid_for(groups, 256), 256, 0, s>>>(reinterpret_cast<const float4*>(in),
                                                                        reinterpret_cast<uint2*>(out), groups);
  if (n > 4 * groups)
    kernels::bf16_encode<<<detail::grid_for(n - 4 * groups, 256), 256, 0, s>>>(
        in + 4 * groups, reinterpret_cast<std::uint16_t*>(out) + 4 * groups, n - 4 * groups);
  detail::check(cudaGetLastError(), "bf16_encode");
}
inline void bf16_decode(const std::byte* in, std::size_t n, float* out, cudaStream_t s = nullptr) {
  if (n == 0) return;
  const std::size_t groups = detail::aligned(in, 8) && detail::aligned(out, 16) ? n / 4 : 0;
  if (groups)
    kernels::bf16_decode4<<<detail::grid_for(groups, 256), 256, 0, s>>>(reinterpret_cast<const uint2*>(in),
                                                                        reinterpret_cast<float4*>(out), groups);
  if (n > 4 * groups)
    kernels::bf16_decode<<<detail::grid_for(n - 4 * groups, 256), 256, 0, s>>>(
        reinterpret_cast<const std::uint16_t*>(in) + 4 * groups, out + 4 * groups, n - 4 * groups);
  detail::check(cudaGetLastError(), "bf16_decode");
}

//! int8 body: ceil(n / 128) fp32 scales, then n int8 values (int8_body_bytes(n) bytes). Device pointers;
//! `out` must be 4-byte aligned (cudaMalloc's is).
inline void int8_encode(const float* in, std::size_t n, std::byte* out, cudaStream_t s = nullptr) {
  if (n == 0) return;
  const std::size_t blocks = (n + int8_block - 1) / int8_block;
  auto* scales = reinterpret_cast<float*>(out);
  auto* values = reinterpret_cast<std::int8_t*>(out + blocks * 4);
  kernels::int8_encode<<<detail::grid_for(blocks, 8), 256, 0, s>>>(in, n, scales, values, detail::aligned(in, 16));
  detail::check(cudaGetLastError(), "int8_encode");
}
inline void int8_decode(const std::byte* in, std::size_t n, float* out, cudaStream_t s = nullptr) {
  if (n == 0) return;
  const std::size_t blocks = (n + int8_block - 1) / int8_block;
  const auto* scales = reinterpret_cast<const float*>(in);
  const auto* values = reinterpret_cast<const std::int8_t*>(in + blocks * 4);
  const std::size_t groups = detail::aligned(values, 4) && detail::aligned(out, 16) ? n / 4 : 0;
  if (groups)
    kernels::int8_decode4<<<detail::grid_for(groups, 256), 256, 0, s>>>(scales, reinterpret_cast<const char4*>(values),
                                                                        groups, reinterpret_cast<float4*>(out));
  if (n > 4 * groups)  // fewer than 4 left, or all of them when the pointers do not suit the vector kernel
    kernels::int8_decode<<<detail::grid_for(n - 4 * groups, 256), 256, 0, s>>>(scales, values, 4 * groups, n, out);
  detail::check(cudaGetLastError(), "int8_decode");
}

}  // namespace trinity::cuda
