#pragma once
//! \file
//! What a compressor declares about itself, at compile time: the wire codec
//! it writes, its role in a chain, whether it loses information and how much
//! (its error bound), whether it keeps state between calls, and whether two
//! of its encodings can be added without decoding (what a reduce-scatter
//! needs). `compress::chain` checks compositions against these traits, and
//! `model::compressor_cost` starts from them before calibration.

#include <cstdint>
#include <string_view>

namespace trinity::compress {

//! The codec a frame names. The numbers are on the wire: never renumber.
enum class codec : std::uint8_t {
  identity = 1,     //!< raw elements
  cast = 2,         //!< narrowed to bf16 or fp16
  zstd = 3,         //!< zstd around raw elements or another frame
  lz4 = 4,          //!< lz4 around raw elements or another frame
  sparse = 5,       //!< indices plus a frame of the values they select
  block_quant = 6,  //!< absmax int8 / int4 per block
  qsgd = 7,         //!< stochastic quantization to s levels per bucket
  sign = 8,         //!< one bit per element plus a scale per block
  low_rank = 9,     //!< PowerSGD's factors P and Q
  delta = 10,       //!< a frame of XOR residuals against the previous frame
};

[[nodiscard]] constexpr std::string_view to_string(codec c) noexcept {
  switch (c) {
    case codec::identity:
      return "identity";
    case codec::cast:
      return "cast";
    case codec::zstd:
      return "zstd";
    case codec::lz4:
      return "lz4";
    case codec::sparse:
      return "sparse";
    case codec::block_quant:
      return "block_quant";
    case codec::qsgd:
      return "qsgd";
    case codec::sign:
      return "sign";
    case codec::low_rank:
      return "low_rank";
    case codec::delta:
      return "delta";
  }
  return "unknown";
}

//! Where a compressor can sit in a chain.
enum class role : std::uint8_t {
  values,      //!< floats -> a frame (quantizers, low rank, identity)
  sparsifier,  //!< picks elements; the next values stage encodes what it picked
  bytes,       //!< a frame -> a smaller frame, losslessly (zstd, lz4)
};

//! How far a decoded element may be from the encoded one. Each kind is a
//! statement the tests check on every input class.
enum class error_kind : std::uint8_t {
  exact,          //!< bit-exact, NaN payloads included
  relative,       //!< |x - y| <= bound * |x| (a narrowing cast)
  block_absmax,   //!< |x - y| <= bound * max|x| over the element's block
  dropped_below,  //!< kept elements exact; each dropped one no larger than any kept one
  unbiased,       //!< E[y] = x; |x - y| <= bound * ||bucket||_2
  contraction,    //!< ||x - y||_2 <= bound * ||x||_2 (sign, low rank: what error feedback needs)
};

struct error_bound {
  error_kind kind = error_kind::exact;
  double bound = 0.0;

  [[nodiscard]] constexpr bool lossless() const noexcept { return kind == error_kind::exact; }
};

struct compressor_traits {
  std::string_view name;
  codec wire_codec = codec::identity;
  compress::role role = role::values;
  error_bound error{};
  //! Keeps state between calls (error feedback, momentum, a warm start, the previous frame).
  bool stateful = false;
  //! Feeds its own error back (DGC's momentum correction, PowerSGD's residual), so wrapping it in
  //! error_feedback<> would count the error twice.
  bool own_error_feedback = false;
  //! Two encodings can be summed without decoding (linear codecs: identity, low rank with a shared Q).
  bool summable = false;
  //! Needs the whole dense tensor in its original order (low rank, a temporal delta), so it cannot
  //! follow a sparsifier.
  bool needs_dense = false;
  //! Original bytes over encoded bytes on normally distributed fp32, headers excluded; a
  //! prior until `trinity calibrate` measures it.
  double expected_ratio = 1.0;
};

//! Whether an all-reduce through this codec must all-gather whole frames rather than sum them along a ring:
//! a sparsifier's ranks keep different indices, and a dense codec that is not summable (PowerSGD's P·Qᵀ)
//! cannot add partial sums either. comm::compressed_all_reduce enforces the same rule at compile time.
[[nodiscard]] constexpr bool all_reduce_gathers(const compressor_traits& t) noexcept {
  return t.role == role::sparsifier || t.error.kind == error_kind::dropped_below || t.wire_codec == codec::sparse ||
         (t.needs_dense && !t.summable);
}

}  // namespace trinity::compress
