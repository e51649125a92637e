#pragma once
//! \file
//! qsgd<Levels, Bucket>: QSGD stochastic quantization (Alistarh et al., 2017).
//! Each bucket keeps its L2 norm; each element becomes sign(x)·l/s·norm with
//! l in 0..s chosen at random between the two nearest levels so that
//! E[y] = x exactly: unbiased, so it needs no error feedback, at the price of
//! variance. |x - y| <= norm/s per element.
//!
//! The random draw is a hash of (seed, call, index), not a sequential
//! generator, so the loop vectorizes and a run is reproducible from its seed.
//! Wire body: ceil(n / Bucket) norms (f32), then n levels as int8 (s > 7) or
//! as int4 packed two per byte, low nibble first (s <= 7).

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/detail/levels.hpp>
#include <trinity/compress/detail/qsgd_kernel.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

namespace detail {
constexpr unsigned qsgd_bits(std::uint32_t levels) { return levels <= 7 ? 4 : 8; }
}  // namespace detail

template <std::uint32_t Levels = 7, std::uint32_t Bucket = 512>
struct qsgd {
  static_assert(Levels >= 1 && Levels <= 127, "trinity: qsgd<Levels> takes 1 to 127 levels (int8 on the wire)");
  static_assert(Bucket >= 2 && Bucket <= (1u << 20) && Bucket % 2 == 0,
                "trinity: qsgd<Levels, Bucket> needs an even bucket of 2 to 2^20 elements");

  using compressor_concept = compressor_tag;
  static constexpr unsigned bits = detail::qsgd_bits(Levels);
  static constexpr compressor_traits traits{.name = "qsgd",
                                            .wire_codec = codec::qsgd,
                                            .role = role::values,
                                            .error = {error_kind::unbiased, 1.0 / Levels},
                                            .stateful = false,
                                            .expected_ratio = 32.0 / (bits + 32.0 / Bucket)};

  explicit qsgd(std::uint32_t seed = 0x5eed) : seed_(seed) {}

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    const std::size_t n = in.size();
    const std::size_t buckets = (n + Bucket - 1) / Bucket;
    const std::size_t at = detail::begin_frame(out, codec::qsgd, element::f32, n, {Levels, Bucket, 0, 0});
    const std::size_t norms_at = out.size();
    out.grow(buckets * 4 + detail::level_bytes(n, bits));
    const std::uint32_t call = detail::mix32(seed_ ^ detail::mix32(calls_++));
    if (q_.size() < std::min<std::size_t>(Bucket, n)) q_.resize(std::min<std::size_t>(Bucket, n));
    std::byte* base = out.data() + norms_at;
    const detail::qsgd_job job{in.data(),
                               n,
                               Bucket,
                               static_cast<int>(Levels),
                               bits,
                               call,
                               residual.empty() ? nullptr : residual.data(),
                               base,
                               base + buckets * 4};
    // On the CPU's widest vectors (detail/qsgd_kernel.hpp); the levels are the portable loop's.
    const auto stop = detail::qsgd_encode(job, q_.data());
    if (stop.what != detail::quant_stop::done) {
      out.shrink_to(at);
      if (stop.what == detail::quant_stop::non_finite) detail::refuse_first_non_finite(traits.name, in);
      detail::refuse_overflow(traits.name, "bucket norm");
    }
    detail::finish_frame(out, at);
  }

 private:
  std::uint32_t seed_;
  std::uint32_t calls_ = 0;
  std::vector<std::int8_t> q_;
};

namespace detail {
inline void decode_qsgd_body(const frame_view& f, std::span<float> out, element want) {
  if (want != element::f32 || f.header.element != element::f32) fail("header.element", "a qsgd frame decodes to f32");
  const std::uint32_t levels = f.header.params[0];
  const std::uint32_t bucket = f.header.params[1];
  if (levels < 1 || levels > 127) fail("qsgd.levels", std::to_string(levels) + " is not from 1 to 127");
  if (bucket < 2 || bucket > (1u << 20) || bucket % 2)
    fail("qsgd.bucket", std::to_string(bucket) + " is not an even bucket size from 2 to 2^20");
  if (f.header.params[2] || f.header.params[3]) fail("qsgd.params", "params[2] and params[3] must be 0");
  const unsigned bits = qsgd_bits(levels);
  const std::uint64_t n = out.size();
  const std::uint64_t buckets = n / bucket + (n % bucket != 0);
  require_body_size(f, checked_add(checked_mul(buckets, 4, "header.count"), level_bytes(n, bits), "header.count"),
                    "qsgd");
  const std::byte* norms = f.body.data();
  const std::byte* values = norms + buckets * 4;
  const int s = static_cast<int>(levels);
  for (std::uint64_t b = 0; b < buckets; ++b) {
    const float norm = load<float>(norms + 4 * b);
    if (!(norm >= 0.0f && norm <= FLT_MAX / 2))
      fail("qsgd.norms[" + std::to_string(b) + "]",
           "must be non-negative and at most FLT_MAX / 2, as every encoder writes it");
    const float step = norm / static_cast<float>(levels);
    const std::size_t lo = static_cast<std::size_t>(b * bucket);
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(bucket, n - lo));
    int bad = 0;
    for (std::size_t j = 0; j < len; ++j) {
      const int v = load_level(values, lo + j, bits);
      bad |= v < -s || v > s;
      out[lo + j] = static_cast<float>(v) * step;
    }
    if (bad) fail("qsgd.values", "bucket " + std::to_string(b) + " holds a level beyond ±" + std::to_string(levels));
  }
}
}  // namespace detail

namespace detail {
//! qsgd frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder qsgd_frames{"qsgd", &decode_with<&decode_qsgd_body>};
inline const bool qsgd_frames_registered = register_frame_decoder(codec::qsgd, qsgd_frames);
}  // namespace detail

}  // namespace trinity::compress
