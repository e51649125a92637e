#pragma once
// Valid inputs for every fuzz target, made by the real encoders: the replay
// driver mutates them, and scripts/fuzz.sh writes them as libFuzzer's
// starting corpus, so the search starts inside each decoder's happy path.

#include "fuzz_require.hpp"
#include "reader_seeds.hpp"

#include <trinity/compress/lossless/catalog.hpp>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/decode.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace trinity::fuzz {

using bytes = std::vector<std::uint8_t>;

//! A codec target's layout (see fuzz_target.hpp) of a real frame.
inline bytes codec_layout(std::span<const std::byte> frame) {
  bytes out(25);
  const auto* h = reinterpret_cast<const std::uint8_t*>(frame.data());
  out[0] = h[6];
  std::memcpy(out.data() + 1, h + 8, 8);
  std::memcpy(out.data() + 9, h + 16, 16);
  out.insert(out.end(), h + compress::header_size, h + frame.size());
  return out;
}

inline std::vector<std::vector<float>> sample_tensors() {
  std::vector<std::vector<float>> t;
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{300}, std::size_t{1000}}) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * static_cast<float>(1 + i % 5);
    t.push_back(std::move(v));
  }
  return t;
}

//! Seeds for the target named `target` (fuzz_<target>).
inline std::vector<bytes> seed_inputs(std::string_view target) {
  std::vector<bytes> seeds;
  if (target.starts_with("reader_")) seeds = reader_seed_inputs(target);
  const auto tensors = sample_tensors();
  for (const auto& entry :
       target.starts_with("reader_") ? std::span<const compress::catalog_entry>{} : compress::catalog()) {
    for (const auto& t : tensors) {
      auto c = entry.make();
      compress::frame_buffer f;
      try {
        c.encode(t, f);
        if (entry.name == "delta-zstd") {  // the second frame of a stream is a real delta frame
          f.clear();
          c.encode(t, f);
        }
      } catch (const invalid_input&) {
        continue;
      }
      const auto codec = compress::to_string(static_cast<compress::codec>(std::to_integer<std::uint8_t>(f.data()[5])));
      if (target == "frame") {
        if (entry.name != "delta-zstd")
          seeds.emplace_back(reinterpret_cast<const std::uint8_t*>(f.data()),
                             reinterpret_cast<const std::uint8_t*>(f.data()) + f.size());
      } else if (target == "round_trip") {
        for (std::size_t i = 0; i < compress::catalog().size(); ++i)
          if (compress::catalog()[i].name == entry.name) {
            bytes b{static_cast<std::uint8_t>(i)};
            const auto* p = reinterpret_cast<const std::uint8_t*>(t.data());
            b.insert(b.end(), p, p + t.size() * 4);
            seeds.push_back(std::move(b));
          }
      } else if (codec == target) {
        seeds.push_back(codec_layout(f.bytes()));
      }
    }
  }
  // Frames nested in a byte stage, for the zstd and lz4 targets.
  if (target == "zstd" || target == "lz4") {
    for (const auto& t : tensors) {
      compress::frame_buffer f;
      if (target == "zstd") {
        compress::chain<compress::int8, compress::zstd<1>> c;
        c.encode(t, f);
      } else {
        compress::chain<compress::int8, compress::lz4<>> c;
        c.encode(t, f);
      }
      seeds.push_back(codec_layout(f.bytes()));
    }
  }
  // Every input a fuzzer once crashed on stays a seed: regressions/<target>-<what>.
#ifdef TRINITY_FUZZ_REGRESSIONS
  for (const auto& file : std::filesystem::directory_iterator(TRINITY_FUZZ_REGRESSIONS)) {
    const std::string name = file.path().filename().string();
    if (name.rfind(std::string(target) + "-", 0) != 0) continue;
    std::ifstream in(file.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
#endif
  return seeds;
}

}  // namespace trinity::fuzz
