#pragma once
//! \file
//! Top-k sparsification: send only the k = ⌈density·n⌉ largest magnitudes.
//!
//! - topk<Density>: exact, by nth_element over all n magnitudes.
//! - sampled_topk<Density>: Deep Gradient Compression's estimate (Lin et al.,
//!   2018): find the threshold on a sample of about 1% of the elements, keep
//!   what passes it in one streaming pass, and trim to k exactly only among the
//!   few that passed. It keeps at most k elements, and still never drops an
//!   element larger than one it keeps, so both share one error bound.
//!
//! Both are sparsifiers: first in a chain, with a values stage after them for
//! the kept values (`chain<topk<>, int8>`); alone they send the values as
//! fp32. Neither keeps state; add `error_feedback<>`, or use `dgc<>`.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ratio>
#include <span>
#include <vector>

#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/select_kernel.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/sparse.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

namespace detail {
template <class Density>
inline constexpr bool is_density = requires {
  Density::num;
  Density::den;
}
&&Density::num > 0 && Density::num <= Density::den&& Density::den < (std::intmax_t{1} << 31);

//! The standalone encode of a sparsifier: its kept values as fp32.
template <class Sparsifier>
void encode_sparsifier(Sparsifier& s, std::span<const float> in, frame_buffer& out, std::span<float> residual,
                       std::vector<std::uint32_t>& idx, std::vector<float>& kept_error) {
  require_residual_size(in.size(), residual.size());
  require_indexable(in.size());
  const std::span<const float> source = s.select(in, idx);
  identity values;
  write_sparse(source, idx, values, out, residual, kept_error, Sparsifier::traits.name);
  s.settle(idx, kept_error);
}

//! The buffers a sampled selection reuses from call to call.
struct sampled_buffers {
  std::vector<std::uint32_t> cidx, scratch;
  std::vector<float> cval;
};

//! Sample-estimated threshold, one streaming pass, exact trim among the passers: the indices of the k
//! largest |x| (ties to the lowest) in `idx`, their values in `kept`. With `add` (error feedback), x + add
//! is selected from, and left in `add`.
inline void sampled_top(std::span<const float> x, float* add, std::size_t k, std::vector<std::uint32_t>& idx,
                        std::vector<float>& kept, sampled_buffers& b) {
  const std::size_t n = x.size();
  idx.clear();
  kept.clear();
  // A sample of 1% (at least 4,096, at most all) estimates the (1 - k/n) quantile of |x|.
  const std::size_t m = std::min(n, std::max<std::size_t>(4096, n / 100));
  if (k == 0 || m == n || k * 4 >= n) {
    // Small or dense: everything is a candidate (the pass with threshold 0 also applies `add`).
    b.cidx.resize(n + 16);
    b.cval.resize(n + 16);
    const std::size_t count = select_at_least({x.data(), add, n, 0, b.cidx.data(), b.cval.data()});
    exact_top_of({b.cidx.data(), count}, {b.cval.data(), count}, k, idx, kept, b.scratch);
    return;
  }
  b.scratch.resize(m);
  const std::size_t stride = n / m;
  const std::size_t offset = mix32(static_cast<std::uint32_t>(n)) % stride;
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t i = offset + j * stride;
    const float v = add ? x[i] + add[i] : x[i];  // the same sum the pass will compute
    b.scratch[j] = std::bit_cast<std::uint32_t>(v) & 0x7fffffffu;
  }
  // Aim a little below k/n of the sample, so the pass usually keeps k or more
  // and the exact trim, not the estimate, decides the last elements.
  const std::size_t kk = std::min(m, std::max<std::size_t>(1, (k * m + n - 1) / n * 5 / 4 + 1));
  std::nth_element(b.scratch.begin(), b.scratch.begin() + static_cast<std::ptrdiff_t>(kk - 1), b.scratch.end(),
                   std::greater<>());
  const std::uint32_t thr = b.scratch[kk - 1];
  // One streaming pass on the CPU's widest vectors (detail/select_kernel.hpp).
  if (b.cidx.size() < n + 16) {
    b.cidx.resize(n + 16);
    b.cval.resize(n + 16);
  }
  const std::size_t count = select_at_least({x.data(), add, n, thr, b.cidx.data(), b.cval.data()});
  exact_top_of({b.cidx.data(), count}, {b.cval.data(), count}, k, idx, kept, b.scratch);
}

//! What a stateless sparsifier adds to its selection to be a Compressor:
//! nothing to settle, and an encode that sends the kept values as fp32.
template <class Derived>
class stateless_sparsifier {
 public:
  void settle(std::span<const std::uint32_t>, std::span<const float>) noexcept {}
  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    encode_sparsifier(static_cast<Derived&>(*this), in, out, residual, idx_, kept_error_);
  }

 private:
  std::vector<std::uint32_t> idx_;
  std::vector<float> kept_error_;
};
}  // namespace detail

template <class Density = std::ratio<1, 100>>
struct topk : detail::stateless_sparsifier<topk<Density>> {
  static_assert(detail::is_density<Density>,
                "trinity: topk<Density> takes a std::ratio in (0, 1], e.g. std::ratio<1, 100> to keep 1%");

  using compressor_concept = compressor_tag;
  static constexpr double density = static_cast<double>(Density::num) / static_cast<double>(Density::den);
  // Kept values travel as 4-byte value + 4-byte index.
  static constexpr compressor_traits traits{.name = "topk",
                                            .wire_codec = codec::sparse,
                                            .role = role::sparsifier,
                                            .error = {error_kind::dropped_below, 0.0},
                                            .expected_ratio = 1.0 / (2.0 * density)};

  std::span<const float> select(std::span<const float> in, std::vector<std::uint32_t>& idx) {
    detail::exact_top(in, {}, detail::keep_count(in.size(), Density::num, Density::den), idx, scratch_);
    return in;
  }

 private:
  std::vector<std::uint32_t> scratch_;
};

template <class Density = std::ratio<1, 100>>
struct sampled_topk {
  static_assert(detail::is_density<Density>,
                "trinity: sampled_topk<Density> takes a std::ratio in (0, 1], e.g. std::ratio<1, 1000> to keep 0.1%");

  using compressor_concept = compressor_tag;
  static constexpr double density = static_cast<double>(Density::num) / static_cast<double>(Density::den);
  static constexpr compressor_traits traits{.name = "sampled_topk",
                                            .wire_codec = codec::sparse,
                                            .role = role::sparsifier,
                                            .error = {error_kind::dropped_below, 0.0},
                                            .expected_ratio = 1.0 / (2.0 * density)};

  //! The selection a chain's value stage then encodes.
  std::span<const float> select(std::span<const float> in, std::vector<std::uint32_t>& idx) {
    detail::require_indexable(in.size());
    detail::sampled_top(in, nullptr, keep_count(in.size()), idx, kept_, buffers_);
    return in;
  }
  void settle(std::span<const std::uint32_t>, std::span<const float>) noexcept {}

  //! The kept values as fp32. The selection brings the values with it, so nothing is read twice.
  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    detail::require_indexable(in.size());
    detail::sampled_top(in, nullptr, keep_count(in.size()), idx_, kept_, buffers_);
    write(in.size(), out);
    if (!residual.empty()) {
      std::copy(in.begin(), in.end(), residual.begin());
      for (std::size_t i = 0; i < idx_.size(); ++i) residual[idx_[i]] = kept_error_[i];
    }
  }

  //! Error feedback in one pass (what error_feedback<sampled_topk> calls): selects from in + error, which the
  //! pass leaves in `error`, then keeps there only what the receiver misses. The same bytes and the same
  //! error as encode(in + error, out, error).
  void encode_with_feedback(std::span<const float> in, std::span<float> error, frame_buffer& out) {
    detail::require_residual_size(in.size(), error.size());
    detail::require_indexable(in.size());
    detail::sampled_top(in, error.data(), keep_count(in.size()), idx_, kept_, buffers_);
    write(in.size(), out);
    for (std::size_t i = 0; i < idx_.size(); ++i) error[idx_[i]] = kept_error_[i];
  }

 private:
  static std::size_t keep_count(std::size_t n) { return detail::keep_count(n, Density::num, Density::den); }
  void write(std::size_t n, frame_buffer& out) {
    identity values;
    detail::write_sparse_kept(n, idx_, std::span<const float>(kept_), values, out, kept_error_, traits.name);
  }

  std::vector<std::uint32_t> idx_;
  std::vector<float> kept_, kept_error_;
  detail::sampled_buffers buffers_;
};

}  // namespace trinity::compress
