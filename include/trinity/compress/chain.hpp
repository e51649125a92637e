#pragma once
//! \file
//! chain<Stages...>: compose compressors at compile time, in the order the
//! data flows: an optional sparsifier, then an optional values stage, then an
//! optional lossless byte stage.
//!
//!   compress::chain<topk<std::ratio<1, 100>>, int8, zstd<3>> c;   // 1% of values, int8, then zstd
//!
//! The output is a nest of frames (zstd around a sparse frame around an int8
//! frame of the kept values), which compress::decode unwraps. A composition
//! that cannot work is a static_assert that says what to change.

#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/sparse.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/compressor.hpp>

namespace trinity::compress {

template <class... Stages>
class chain;

namespace detail {
template <class T>
inline constexpr bool is_chain = false;
template <class... S>
inline constexpr bool is_chain<chain<S...>> = true;

template <class T>
concept wraps_error_feedback = requires {
  T::is_error_feedback;
};

template <class... S>
struct chain_plan {
  static constexpr std::size_t size = sizeof...(S);
  static constexpr role roles[size == 0 ? 1 : size] = {S::traits.role...};
  static constexpr bool dense[size == 0 ? 1 : size] = {S::traits.needs_dense...};

  static constexpr std::size_t count(role r) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < size; ++i) c += roles[i] == r;
    return c;
  }
  static constexpr bool sparsifier_first_only() {
    for (std::size_t i = 1; i < size; ++i)
      if (roles[i] == role::sparsifier) return false;
    return count(role::sparsifier) <= 1;
  }
  static constexpr bool no_values_after_bytes() {
    bool seen_bytes = false;
    for (std::size_t i = 0; i < size; ++i) {
      if (roles[i] == role::bytes) seen_bytes = true;
      if (seen_bytes && roles[i] != role::bytes) return false;
    }
    return true;
  }
  static constexpr bool dense_not_after_sparsifier() {
    if (size == 0 || roles[0] != role::sparsifier) return true;
    for (std::size_t i = 1; i < size; ++i)
      if (dense[i]) return false;
    return true;
  }
};

template <class... S>
consteval compressor_traits chain_traits() {
  using plan = chain_plan<S...>;
  compressor_traits t{};
  t.name = "chain";
  t.role = role::values;
  t.summable = (S::traits.summable && ...);
  t.stateful = (S::traits.stateful || ...);
  t.own_error_feedback = (S::traits.own_error_feedback || ...);
  t.needs_dense = (S::traits.needs_dense || ...);
  const compressor_traits all[] = {S::traits...};
  t.wire_codec = all[plan::size - 1].wire_codec;
  const compressor_traits* sparsifier = nullptr;
  const compressor_traits* values = nullptr;
  double byte_ratio = 1.0;
  for (const auto& s : all) {
    if (s.role == role::sparsifier) sparsifier = &s;
    if (s.role == role::values) values = &s;
    if (s.role == role::bytes) byte_ratio *= s.expected_ratio;
  }
  const double values_ratio = values ? values->expected_ratio : 1.0;
  if (sparsifier) {
    // k indices at 4 bytes, k values at 4 / values_ratio bytes, out of 4n: ratio_s = 1 / (2·density).
    const double density = 1.0 / (2.0 * sparsifier->expected_ratio);
    t.expected_ratio = byte_ratio / (density * (1.0 + 1.0 / values_ratio));
    t.error = sparsifier->error;
    if (values && !values->error.lossless()) t.error.bound = values->error.bound;  // on the kept values
  } else {
    t.expected_ratio = values_ratio * byte_ratio;
    t.error = values ? values->error : error_bound{};
  }
  return t;
}
}  // namespace detail

template <class... Stages>
class chain {
  static_assert(sizeof...(Stages) > 0, "trinity: chain<> is empty. Fix: name at least one compressor.");
  static_assert((diagnose_compressor<Stages>() && ...), "trinity: every stage of a chain must be a Compressor");
  static_assert((!detail::is_chain<Stages> && ...),
                "trinity: a chain inside a chain. Fix: list its stages in the outer chain instead.");
  static_assert((!detail::wraps_error_feedback<Stages> && ...),
                "trinity: error_feedback<> inside a chain would feed back one stage's error only. Fix: wrap the "
                "whole chain, error_feedback<chain<...>>.");
  using plan = detail::chain_plan<Stages...>;
  static_assert(plan::sparsifier_first_only(),
                "trinity: a sparsifier (topk, sampled_topk, dgc) must come first in a chain, and only one: it "
                "chooses elements of the original tensor, which later stages no longer have. Fix: move it to the "
                "front.");
  static_assert(plan::count(role::values) <= 1,
                "trinity: a chain takes at most one values stage (quantize, qsgd, sign, powersgd, cast, delta, "
                "identity): the second would quantize values that are already quantized. Fix: keep one.");
  static_assert(plan::no_values_after_bytes(),
                "trinity: a values stage cannot follow a lossless byte stage (zstd, lz4): their output is "
                "compressed bytes, not floats. Fix: put the values stage before the byte stage.");
  static_assert(plan::count(role::bytes) <= 1,
                "trinity: a second lossless stage compresses bytes that are already compressed and gains nothing. "
                "Fix: keep one of zstd and lz4.");
  static_assert(plan::dense_not_after_sparsifier(),
                "trinity: powersgd and delta need the dense tensor in its original order, so they cannot follow a "
                "sparsifier. Fix: put a quantizer (int8, int4, qsgd) after the sparsifier, or drop the sparsifier.");

  static constexpr bool has_sparsifier = plan::roles[0] == role::sparsifier;
  static constexpr bool has_values = plan::count(role::values) == 1;
  static constexpr bool has_bytes = plan::count(role::bytes) == 1;
  static constexpr std::size_t values_at = has_sparsifier ? 1 : 0;

 public:
  using compressor_concept = compressor_tag;
  static constexpr compressor_traits traits = detail::chain_traits<Stages...>();

  chain() = default;
  explicit chain(Stages... stages) : stages_(std::move(stages)...) {}

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    if constexpr (!has_sparsifier && !has_values) {
      std::get<0>(stages_).encode(in, out, residual);  // a lone byte stage compresses the floats themselves
    } else if constexpr (has_bytes) {
      inner_.clear();
      encode_lossy(in, inner_, residual);
      std::get<sizeof...(Stages) - 1>(stages_).wrap(inner_.bytes(), out, element::frame, in.size());
    } else {
      encode_lossy(in, out, residual);
    }
  }

  template <std::size_t I>
  [[nodiscard]] auto& stage() noexcept {
    return std::get<I>(stages_);
  }

 private:
  void encode_lossy(std::span<const float> in, frame_buffer& out, std::span<float> residual) {
    if constexpr (has_sparsifier) {
      detail::require_indexable(in.size());
      auto& s = std::get<0>(stages_);
      const std::span<const float> source = s.select(in, idx_);
      if constexpr (has_values) {
        detail::write_sparse(source, idx_, std::get<1>(stages_), out, residual, kept_error_, traits.name);
      } else {
        identity raw;
        detail::write_sparse(source, idx_, raw, out, residual, kept_error_, traits.name);
      }
      s.settle(idx_, kept_error_);
    } else {
      std::get<values_at>(stages_).encode(in, out, residual);
    }
  }

  std::tuple<Stages...> stages_;
  frame_buffer inner_;
  std::vector<std::uint32_t> idx_;
  std::vector<float> kept_error_;
};

}  // namespace trinity::compress
