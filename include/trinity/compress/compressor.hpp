#pragma once
//! \file
//! Compressor: encodes floats into a frame that compress::decode reads back,
//! and declares what it is (compress::compressor_traits) at compile time.
//!
//!   struct my_codec {
//!     using compressor_concept = trinity::compressor_tag;
//!     static constexpr trinity::compress::compressor_traits traits{.name = "mine", ...};
//!     void encode(std::span<const float> in, trinity::compress::frame_buffer& out,
//!                 std::span<float> residual = {});   // residual: in - decode(out), when asked
//!   };
//!
//! A lossless byte stage (role::bytes) also wraps bytes in a frame:
//! `wrap(std::span<const std::byte>, frame_buffer&, element, std::uint64_t count)`.
//! A sparsifier (role::sparsifier) also picks elements for the next stage:
//! `select(in, std::vector<std::uint32_t>& indices) -> std::span<const float>`
//! and `settle(indices, kept_error)`.

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include <trinity/compress/element.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/opt_in.hpp>

namespace trinity {

//! Says `using compressor_concept = trinity::compressor_tag;`.
template <class C>
concept opts_into_compressor = requires {
  typename C::compressor_concept;
}
&&std::same_as<typename C::compressor_concept, compressor_tag>;

//! Has `static constexpr compress::compressor_traits traits`.
template <class C>
concept declares_compressor_traits = requires {
  { C::traits } -> std::convertible_to<const compress::compressor_traits&>;
  typename std::integral_constant<bool, (static_cast<void>(C::traits.expected_ratio), true)>;
};

//! `encode(std::span<const float>, frame_buffer&)`, and with a residual span.
template <class C>
concept encodes_floats = requires(C& c, std::span<const float> in, compress::frame_buffer& out, std::span<float> r) {
  c.encode(in, out);
  c.encode(in, out, r);
};

//! A lossless stage wraps any bytes in a frame.
template <class C>
concept wraps_bytes = requires(C& c, std::span<const std::byte> raw, compress::frame_buffer& out, compress::element e,
                               std::uint64_t n) {
  c.wrap(raw, out, e, n);
};

//! A sparsifier picks the elements the next stage encodes, then settles its state.
template <class C>
concept selects_elements = requires(C& c, std::span<const float> in, std::vector<std::uint32_t>& idx,
                                    std::span<const std::uint32_t> kept, std::span<const float> err) {
  { c.select(in, idx) } -> std::convertible_to<std::span<const float>>;
  c.settle(kept, err);
};

//! Has the members its declared role needs.
template <class C>
concept plays_its_role = declares_compressor_traits<C> &&
    (C::traits.role != compress::role::bytes || wraps_bytes<C>)&&(C::traits.role != compress::role::sparsifier ||
                                                                  selects_elements<C>);

template <class C>
concept Compressor = opts_into_compressor<C> && declares_compressor_traits<C> && encodes_floats<C> && plays_its_role<C>;

//! Fails to compile, with the fix in the message, unless C is a Compressor.
template <class C>
consteval bool diagnose_compressor() {
  static_assert(
      opts_into_compressor<C>,
      "trinity: this type is not a Compressor. Fix: add `using compressor_concept = trinity::compressor_tag;`.");
  if constexpr (opts_into_compressor<C>) {
    static_assert(declares_compressor_traits<C>,
                  "trinity: a Compressor declares what it is. Fix: add `static constexpr "
                  "trinity::compress::compressor_traits traits{...};`.");
    static_assert(encodes_floats<C>,
                  "trinity: a Compressor encodes floats. Fix: add `void encode(std::span<const float>, "
                  "trinity::compress::frame_buffer&, std::span<float> residual = {})`.");
    if constexpr (declares_compressor_traits<C>) {
      static_assert(C::traits.role != compress::role::bytes || wraps_bytes<C>,
                    "trinity: a lossless byte stage (role::bytes) wraps another frame. Fix: add `void "
                    "wrap(std::span<const std::byte>, frame_buffer&, element, std::uint64_t count)`.");
      static_assert(C::traits.role != compress::role::sparsifier || selects_elements<C>,
                    "trinity: a sparsifier (role::sparsifier) picks elements for the next stage. Fix: add "
                    "`std::span<const float> select(std::span<const float>, std::vector<std::uint32_t>&)` and "
                    "`void settle(std::span<const std::uint32_t>, std::span<const float>)`.");
    }
  }
  return Compressor<C>;
}

}  // namespace trinity
