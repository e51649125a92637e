#pragma once
//! \file
//! The sparse frame every sparsifier writes: the ascending indices of the
//! elements it kept, then a nested frame of their values, so a quantizer can
//! shrink the values (`chain<topk<>, int8>`) and the decoder needs one format
//! for every sparsifier. Indices are 32-bit: a frame holds at most 2^32 - 1
//! elements.
//!
//! Wire: params[0..1] = k. Body: k u32 indices, strictly rising and below
//! count, then one frame of k values.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/error.hpp>

namespace trinity::compress::detail {

inline void require_indexable(std::size_t n) {
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw invalid_input("input", std::to_string(n) + " elements: a sparse frame indexes with 32 bits (at most " +
                                     std::to_string(std::numeric_limits<std::uint32_t>::max()) + "); split the tensor");
}

//! k for a density num/den of n elements: rounded up, at least one element of a non-empty input.
constexpr std::size_t keep_count(std::size_t n, std::intmax_t num, std::intmax_t den) {
  if (n == 0) return 0;
  // Split n by den so nothing overflows for densities with den < 2^31 (topk's static_assert).
  const auto d = static_cast<std::uint64_t>(den), m = static_cast<std::uint64_t>(num);
  const std::uint64_t q = n / d, r = n % d;
  const auto k = static_cast<std::size_t>(q * m + (r * m + d - 1) / d);
  return std::clamp<std::size_t>(k, 1, n);
}

//! Writes the sparse frame of n elements keeping idx (ascending) with values `kept`, through `values`; the
//! value stage's error on each kept value is left in `kept_error`. A non-finite kept value is refused.
template <class ValueStage>
void write_sparse_kept(std::size_t n, std::span<const std::uint32_t> idx, std::span<const float> kept,
                       ValueStage& values, frame_buffer& out, std::vector<float>& kept_error,
                       std::string_view codec_name) {
  const std::size_t k = idx.size();
  for (std::size_t i = 0; i < k; ++i)
    if (non_finite_bits(std::bit_cast<std::uint32_t>(kept[i]))) refuse_non_finite(codec_name, idx[i], kept[i]);
  const std::uint64_t k64 = k;
  const std::size_t at = begin_frame(out, codec::sparse, element::f32, n,
                                     {static_cast<std::uint32_t>(k64), static_cast<std::uint32_t>(k64 >> 32), 0, 0});
  if (k) std::memcpy(out.grow(k * 4), idx.data(), k * 4);
  kept_error.assign(k, 0.0f);
  values.encode(kept, out, std::span<float>(kept_error));
  finish_frame(out, at);
}

//! Writes the sparse frame of source[idx] with `values` encoding the kept values.
//! With `residual`, it receives what the receiver will miss: source[i] where
//! dropped, the value stage's own error where kept. Returns nothing; the
//! value stage's per-kept error is left in `kept_error` for a sparsifier's
//! own feedback.
template <class ValueStage>
void write_sparse(std::span<const float> source, std::span<const std::uint32_t> idx, ValueStage& values,
                  frame_buffer& out, std::span<float> residual, std::vector<float>& kept_error,
                  std::string_view codec_name) {
  const std::size_t k = idx.size();
  std::vector<float> kept(k);
  for (std::size_t i = 0; i < k; ++i) kept[i] = source[idx[i]];
  write_sparse_kept(source.size(), idx, std::span<const float>(kept), values, out, kept_error, codec_name);
  if (!residual.empty()) {
    std::copy(source.begin(), source.end(), residual.begin());
    for (std::size_t i = 0; i < k; ++i) residual[idx[i]] = kept_error[i];
  }
}

//! Among m candidates (ascending indices with their values), the k of largest |value|, ties at the
//! threshold to the lowest indices: their indices to `idx`, their values to `kept`. The same choice as
//! exact_top over the same candidates, without going back to the input.
inline void exact_top_of(std::span<const std::uint32_t> cidx, std::span<const float> cval, std::size_t k,
                         std::vector<std::uint32_t>& idx, std::vector<float>& kept,
                         std::vector<std::uint32_t>& scratch) {
  const std::size_t m = cidx.size();
  idx.clear();
  kept.clear();
  if (k == 0) return;
  const auto mag = [&](std::size_t j) { return std::bit_cast<std::uint32_t>(cval[j]) & 0x7fffffffu; };
  if (k >= m) {
    idx.assign(cidx.begin(), cidx.end());
    kept.assign(cval.begin(), cval.end());
    return;
  }
  scratch.resize(m);
  for (std::size_t j = 0; j < m; ++j) scratch[j] = mag(j);
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k - 1), scratch.end(),
                   std::greater<>());
  const std::uint32_t thr = scratch[k - 1];
  std::size_t above = 0;
  for (std::size_t j = 0; j < k - 1; ++j) above += scratch[j] > thr;
  std::size_t ties = k - above;
  idx.reserve(k);
  kept.reserve(k);
  for (std::size_t j = 0; j < m; ++j) {
    const std::uint32_t b = mag(j);
    if (b > thr || (b == thr && ties > 0 && ties--)) {
      idx.push_back(cidx[j]);
      kept.push_back(cval[j]);
    }
  }
}

//! The indices of the k largest |x| among `candidates` (all of x when empty),
//! ascending; ties at the threshold go to the lowest indices. Compares the
//! bit patterns of |x|, which order like the magnitudes and put NaN and
//! infinity first, where the caller's finiteness check will see them.
inline void exact_top(std::span<const float> x, std::span<const std::uint32_t> candidates, std::size_t k,
                      std::vector<std::uint32_t>& idx, std::vector<std::uint32_t>& scratch) {
  const bool all = candidates.empty();
  const std::size_t m = all ? x.size() : candidates.size();
  idx.clear();
  if (k == 0) return;
  auto mag = [&](std::size_t i) { return std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu; };
  scratch.resize(m);
  for (std::size_t j = 0; j < m; ++j) scratch[j] = mag(all ? j : candidates[j]);
  if (k >= m) {
    for (std::size_t j = 0; j < m; ++j) idx.push_back(static_cast<std::uint32_t>(all ? j : candidates[j]));
    return;
  }
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k - 1), scratch.end(),
                   std::greater<>());
  const std::uint32_t thr = scratch[k - 1];
  std::size_t above = 0;
  for (std::size_t j = 0; j < k - 1; ++j) above += scratch[j] > thr;
  std::size_t ties = k - above;
  idx.reserve(k);
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t i = all ? j : candidates[j];
    const std::uint32_t b = mag(i);
    if (b > thr || (b == thr && ties > 0 && ties--)) idx.push_back(static_cast<std::uint32_t>(i));
  }
}

inline void decode_sparse_body(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                               const nested_decoder& nested) {
  if (want != element::f32 || f.header.element != element::f32) fail("header.element", "a sparse frame decodes to f32");
  const std::uint64_t k = f.header.params[0] | (std::uint64_t{f.header.params[1]} << 32);
  if (f.header.params[2] || f.header.params[3]) fail("sparse.params", "params[2] and params[3] must be 0");
  if (k > out.size()) fail("sparse.k", std::to_string(k) + " kept elements of only " + std::to_string(out.size()));
  if (k > f.body.size() / 4)
    fail("sparse.k", std::to_string(k) + " indices need " + std::to_string(k) + " × 4 bytes; the body has " +
                         std::to_string(f.body.size()));
  const std::byte* p = f.body.data();
  std::uint64_t previous = 0;
  for (std::uint64_t i = 0; i < k; ++i) {
    const std::uint32_t at = load<std::uint32_t>(p + 4 * i);
    if (at >= out.size() || (i > 0 && at <= previous))
      fail("sparse.indices[" + std::to_string(i) + "]",
           std::to_string(at) + " is not below " + std::to_string(out.size()) + " and above the index before it");
    previous = at;
  }
  ctx.charge(k, 4, "sparse.k");
  auto values = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(k));
  nested(f.body.subspan(static_cast<std::size_t>(4 * k)), {values.get(), static_cast<std::size_t>(k)}, element::f32);
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::uint64_t i = 0; i < k; ++i) out[load<std::uint32_t>(p + 4 * i)] = values[i];
}

//! Sparse frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder sparse_frames{"sparse", &decode_with<&decode_sparse_body>};
inline const bool sparse_frames_registered = register_frame_decoder(codec::sparse, sparse_frames);

}  // namespace trinity::compress::detail
