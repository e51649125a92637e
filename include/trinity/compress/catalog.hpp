#pragma once
//! \file
//! The built-in compressors by name: what `trinity calibrate` measures, what
//! the chooser picks among, and what examples/compressed_exchange races.
//! Each name is one static composition; write your own with chain<> and
//! register it beside these with any_compressor.

#include <functional>
#include <ratio>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/cast.hpp>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/delta.hpp>
#include <trinity/compress/dgc.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/lz4.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/sign.hpp>
#include <trinity/compress/topk.hpp>
#include <trinity/compress/zstd.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

struct catalog_entry {
  std::string name;
  std::string_view what;
  std::function<any_compressor()> make;
};

namespace detail {
template <class C>
catalog_entry entry(std::string name, std::string_view what) {
  return {name, what, [name] { return any_compressor(name, C{}); }};
}
}  // namespace detail

[[nodiscard]] inline const std::vector<catalog_entry>& catalog() {
  using percent = std::ratio<1, 100>;
  using permille = std::ratio<1, 1000>;
  static const std::vector<catalog_entry> entries = {
      detail::entry<identity>("identity", "the floats as they are"),
      detail::entry<bf16>("bf16", "round to bfloat16"),
      detail::entry<fp16>("fp16", "round to IEEE half"),
      detail::entry<lz4<>>("lz4", "LZ4 on the float bytes, lossless"),
      detail::entry<zstd<1>>("zstd", "zstd -1 on the float bytes, lossless"),
      detail::entry<error_feedback<int8>>("int8-ef", "absmax int8 per 128, error feedback"),
      detail::entry<error_feedback<int4>>("int4-ef", "absmax int4 per 128, error feedback"),
      detail::entry<qsgd<7>>("qsgd-7", "QSGD, 7 levels (4 bits), unbiased"),
      detail::entry<qsgd<127>>("qsgd-127", "QSGD, 127 levels (8 bits), unbiased"),
      detail::entry<error_feedback<sign<>>>("sign-ef", "1 bit + scale per 256, error feedback"),
      detail::entry<error_feedback<topk<percent>>>("topk-1%-ef", "exact top 1%, error feedback"),
      detail::entry<error_feedback<topk<permille>>>("topk-0.1%-ef", "exact top 0.1%, error feedback"),
      detail::entry<error_feedback<sampled_topk<percent>>>("sampled-topk-1%-ef",
                                                           "sampled-threshold top 1%, error feedback"),
      detail::entry<error_feedback<sampled_topk<permille>>>("sampled-topk-0.1%-ef",
                                                            "sampled-threshold top 0.1%, error feedback"),
      detail::entry<dgc<permille>>("dgc-0.1%", "DGC: momentum correction, sampled top 0.1%"),
      detail::entry<error_feedback<chain<sampled_topk<percent>, int8, zstd<1>>>>(
          "sampled-topk-1%+int8+zstd-ef", "sampled top 1%, values int8, zstd, error feedback"),
      detail::entry<powersgd<4>>("powersgd-4", "PowerSGD rank 4, warm start, error feedback"),
      detail::entry<delta<zstd<1>>>("delta-zstd", "XOR against the previous frame, zstd -1, lossless"),
  };
  return entries;
}

//! A fresh compressor by catalog name; an unknown name is an error listing the known ones.
[[nodiscard]] inline any_compressor make_compressor(std::string_view name) {
  for (const auto& e : catalog())
    if (e.name == name) return e.make();
  std::string known;
  for (const auto& e : catalog()) known += (known.empty() ? "" : ", ") + e.name;
  throw invalid_input("compressor",
                      "\"" + std::string(name) + "\" is not a built-in compressor; choose one of " + known);
}

}  // namespace trinity::compress
