#pragma once
//! \file
//! Real work for the curation executor, from trinity's own mechanisms, so a
//! run's utilisation and throughput are measured on kernels that compute:
//!  - the source hands out encoded clips: frames of floats quantized to int8
//!    (compress::quantize), as a video arrives compressed;
//!  - `decode_operator` decodes them with compress::decode (every byte
//!    checked, as any decoder here does), a CPU-bound operator;
//!  - `split_operator` pools the frames into one embedding per clip;
//!  - `index_model` is a model on a device: its weights are an exact
//!    similarity index (cache::flat_index) of `rows` vectors, resident on each
//!    device that holds it, and a sample costs `passes` searches of it (its steps) (a
//!    captioner makes many passes over its weights, a scorer one). It keeps a
//!    fixed share of the samples, chosen by a hash of their id, so a run's
//!    filter rates are the workload's.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <trinity/cache/flat_index.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/detail/splitmix.hpp>
#include <trinity/error.hpp>
#include <trinity/pipeline/resident_model.hpp>

namespace trinity::pipeline {

namespace detail {
// A reproducible value in [-1, 1) from a counter.
inline float unit_value(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(
      static_cast<double>(trinity::detail::splitmix64(seed ^ (i * 0x9e3779b97f4a7c15ULL)) >> 11) * 0x1.0p-52 - 1.0);
}
// A share in [0, 1) from an id: the same sample passes the same filter on every device and every run.
inline double hashed_share(std::uint64_t id, std::uint64_t seed) {
  return static_cast<double>(trinity::detail::splitmix64(id ^ trinity::detail::splitmix64(seed)) >> 11) * 0x1.0p-53;
}
}  // namespace detail

//! Encoded clips of `floats` values each (int8, 128-value blocks): `variety` distinct ones made once, handed
//! out by id so that the source costs a copy, not an encode.
inline std::function<sample(std::uint64_t)> encoded_clip_source(std::size_t floats, std::size_t variety = 16,
                                                                std::uint64_t seed = 1) {
  trinity::detail::require(floats >= 1, "floats", "a clip needs at least one value");
  trinity::detail::require(variety >= 1, "variety", "make at least one clip");
  auto clips = std::make_shared<std::vector<std::vector<std::byte>>>();
  compress::quantize<8, 128> q;
  std::vector<float> frame(floats);
  for (std::size_t c = 0; c < variety; ++c) {
    for (std::size_t i = 0; i < floats; ++i) frame[i] = detail::unit_value(seed + c, i);
    compress::frame_buffer out;
    q.encode(frame, out);
    clips->emplace_back(out.bytes().begin(), out.bytes().end());
  }
  return [clips](std::uint64_t id) {
    sample s;
    s.id = id;
    s.payload = (*clips)[id % clips->size()];
    return s;
  };
}

//! Decodes the clip's bytes into its values (compress::decode; a hostile frame throws compress::decode_error).
inline cpu_operator decode_operator(std::string name = "decode") {
  return {std::move(name), [](sample& s) {
            s.features = compress::decode(s.payload);
            s.payload.clear();
          }};
}

//! Pools the decoded values into one `dimension`-value embedding: the mean of each of `dimension` runs.
inline cpu_operator split_operator(std::size_t dimension, std::string name = "split") {
  trinity::detail::require(dimension >= 1, "dimension", "must be at least 1");
  return {std::move(name), [dimension](sample& s) {
            trinity::detail::require(s.features.size() >= dimension, "sample.features",
                                     "has fewer values than the embedding's dimension");
            std::vector<float> e(dimension, 0.0f);
            const std::size_t per = s.features.size() / dimension;
            for (std::size_t d = 0; d < dimension; ++d) {
              float sum = 0;
              for (std::size_t i = 0; i < per; ++i) sum += s.features[d * per + i];
              e[d] = sum / static_cast<float>(per) + 1e-3f;  // never the zero vector, which cosine refuses
            }
            s.features = std::move(e);
          }};
}

//! The bytes an index_model of `rows` vectors of `dimension` holds on each device: its keys and their ids.
inline bytes index_model_footprint(std::size_t rows, std::size_t dimension) {
  return bytes{static_cast<double>(rows * dimension * sizeof(float) + rows * sizeof(std::uint64_t))};
}

namespace detail {
class index_model_copy final : public resident_model {
 public:
  index_model_copy(std::size_t rows, std::size_t dimension, std::size_t passes, double share, std::uint64_t seed)
      : index_(dimension, {cache::metric::inner_product, 1}),
        passes_(passes),
        share_(share),
        seed_(seed),
        query_(dimension) {
    index_.reserve(rows);
    std::vector<float> key(dimension);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < dimension; ++i) key[i] = unit_value(seed, r * dimension + i);
      index_.add(r, key);
    }
  }
  [[nodiscard]] bytes memory() const override { return bytes{static_cast<double>(index_.memory_bytes())}; }
  [[nodiscard]] std::size_t steps() const override { return passes_; }
  bool step(sample& s, std::size_t p) override {
    trinity::detail::require(
        s.features.size() == index_.dimension(), "sample.features",
        "has " + std::to_string(s.features.size()) + " values; the model takes " + std::to_string(index_.dimension()));
    // Each pass asks with the embedding turned by p places: a different query over the same weights.
    const std::size_t n = query_.size();
    for (std::size_t i = 0; i < n; ++i) query_[i] = s.features[(i + p) % n];
    s.score += index_.search(query_, 1).front().similarity;
    return hashed_share(s.id, seed_) < share_;
  }

 private:
  cache::flat_index index_;
  std::size_t passes_;
  double share_;
  std::uint64_t seed_;
  std::vector<float> query_;
};
}  // namespace detail

//! A model of `rows` weight vectors of `dimension`, `passes` searches per sample, keeping `share` of them.
inline model_operator index_model(std::string name, std::size_t rows, std::size_t dimension, std::size_t passes,
                                  double share = 1, std::uint64_t seed = 7) {
  trinity::detail::require(rows >= 1, name + ".rows", "must be at least 1");
  trinity::detail::require(dimension >= 1, name + ".dimension", "must be at least 1");
  trinity::detail::require(passes >= 1, name + ".passes", "must be at least 1");
  trinity::detail::require(share > 0 && share <= 1, name + ".share", "must lie in (0, 1]");
  const std::uint64_t s = trinity::detail::splitmix64(seed ^ std::hash<std::string>{}(name));
  return {name, index_model_footprint(rows, dimension), [=] {
            return std::unique_ptr<resident_model>(new detail::index_model_copy(rows, dimension, passes, share, s));
          }};
}

}  // namespace trinity::pipeline
