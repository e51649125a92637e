#pragma once
//! \file
//! The lossless codecs' names in compress::catalog(), registered where this header is included: zstd and lz4 on
//! the float bytes, sampled top-k with int8 values under zstd, and delta frames under zstd. They follow the
//! codecs that need no library, in this order.

#include <ratio>

#include <trinity/compress/catalog.hpp>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/lossless/delta.hpp>
#include <trinity/compress/lossless/lz4.hpp>
#include <trinity/compress/lossless/zstd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

namespace trinity::compress::detail {

inline bool register_lossless_codecs() {
  using percent = std::ratio<1, 100>;
  register_compressor(named<lz4<>>("lz4", "LZ4 on the float bytes, lossless"));
  register_compressor(named<zstd<1>>("zstd", "zstd -1 on the float bytes, lossless"));
  register_compressor(named<error_feedback<chain<sampled_topk<percent>, int8, zstd<1>>>>(
      "sampled-topk-1%+int8+zstd-ef", "sampled top 1%, values int8, zstd, error feedback"));
  register_compressor(named<delta<zstd<1>>>("delta-zstd", "XOR against the previous frame, zstd -1, lossless"));
  return true;
}
inline const bool lossless_codecs_registered = register_lossless_codecs();

}  // namespace trinity::compress::detail
