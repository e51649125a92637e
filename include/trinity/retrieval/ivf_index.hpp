#pragma once
//! \file
//! An inverted-file index (IVF-Flat, as FAISS's IndexIVFFlat): k-means splits the vectors into `lists`, each
//! list holds the ids, squared norms and full vectors nearest its centroid, and a search scores the centroids,
//! scans the `nprobe` nearest lists and keeps the k nearest vectors it met. Distance is squared L2, computed as
//! FAISS's IVF scan computes it, ‖x‖² − 2⟨q, x⟩ + ‖q‖², the inner product on the widest vector unit the CPU has
//! (cache/detail/inner_product.hpp); a hit's similarity is its negated distance, so more similar ranks first
//! and ties go to the smaller id (cache::detail::top_k).
//! The knob nprobe trades compute and bytes read for recall: nprobe = lists is the exact search.
//!
//!   retrieval::ivf_index index(128, {.lists = 256});
//!   index.train(sample);                        // k-means over sample.size() / 128 vectors
//!   index.add(vectors, 0);                      // ids 0, 1, ...
//!   auto hits = index.search(query, 10, 8);     // the 10 nearest met in the 8 nearest lists

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <trinity/cache/detail/inner_product.hpp>
#include <trinity/cache/detail/top_k.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/error.hpp>

namespace trinity::retrieval {

struct ivf_options {
  std::size_t lists = 64;       //!< k-means clusters, each an inverted list
  std::size_t iterations = 12;  //!< Lloyd iterations of the training
};

namespace detail {
inline float squared_distance(const float* a, const float* b, std::size_t d) noexcept {
  float acc = 0;
  for (std::size_t i = 0; i < d; ++i) {
    const float x = a[i] - b[i];
    acc += x * x;
  }
  return acc;
}
//! ‖x‖² − 2⟨q, x⟩ + ‖q‖², given ‖x‖² and ‖q‖²: a scan's distance, one inner product a row.
inline float scan_distance(cache::detail::isa set, const float* q, const float* x, float x_norm, float q_norm,
                           std::size_t d) {
  return x_norm - 2.0f * cache::detail::dot(set, q, x, d) + q_norm;
}
}  // namespace detail

//! The exact k nearest of the row-major vectors to `query`, ids first_id + row, by the distance an IVF scan
//! computes: recall's reference, and the IVF search's answer with every list probed.
inline std::vector<neighbour> exact_search(std::span<const float> vectors, std::size_t dimension,
                                           std::span<const float> query, std::size_t k, std::uint64_t first_id = 0) {
  const auto set = cache::detail::best_isa();
  const float q_norm = cache::detail::dot(set, query.data(), query.data(), dimension);
  cache::detail::top_k best(k);
  for (std::size_t r = 0; r * dimension < vectors.size(); ++r) {
    const float* x = vectors.data() + r * dimension;
    const float x_norm = cache::detail::dot(set, x, x, dimension);
    best.offer(first_id + r, -detail::scan_distance(set, query.data(), x, x_norm, q_norm, dimension));
  }
  return std::move(best).sorted();
}

class ivf_index {
 public:
  ivf_index(std::size_t dimension, ivf_options o) : d_(dimension), o_(o), isa_(cache::detail::best_isa()) {
    trinity::detail::require(dimension >= 1 && dimension <= (std::size_t{1} << 16), "dimension",
                             "must be from 1 to 65536");
    trinity::detail::require(o.lists >= 1 && o.lists <= (std::size_t{1} << 20), "lists", "must be from 1 to 1048576");
    trinity::detail::require(o.iterations >= 1, "iterations", "k-means needs at least one iteration");
  }

  //! k-means (Lloyd's) over the sample's rows: the first `lists` rows spread evenly over the sample seed the
  //! centroids; an emptied cluster keeps its centroid. Deterministic: the same sample, the same centroids.
  void train(std::span<const float> sample) {
    const std::size_t n = rows_in(sample, "sample"), L = o_.lists;
    trinity::detail::require(n >= L, "sample",
                             std::to_string(n) + " vectors cannot seed " + std::to_string(L) +
                                 " lists. Fix: at least as many training vectors as lists");
    centroids_.assign(L * d_, 0.0f);
    for (std::size_t l = 0; l < L; ++l) std::copy_n(sample.data() + (l * n / L) * d_, d_, centroids_.data() + l * d_);
    measure_centroids();
    std::vector<double> sum(L * d_);
    std::vector<std::size_t> count(L);
    std::vector<float> scratch;
    std::vector<std::size_t> assigned(n);
    for (std::size_t it = 0; it < o_.iterations; ++it) {
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(count.begin(), count.end(), 0);
      assign(sample.data(), n, assigned.data(), scratch);
      for (std::size_t r = 0; r < n; ++r) {
        const std::size_t l = assigned[r];
        ++count[l];
        for (std::size_t i = 0; i < d_; ++i) sum[l * d_ + i] += sample[r * d_ + i];
      }
      for (std::size_t l = 0; l < L; ++l)
        if (count[l] > 0)
          for (std::size_t i = 0; i < d_; ++i)
            centroids_[l * d_ + i] = static_cast<float>(sum[l * d_ + i] / static_cast<double>(count[l]));
      measure_centroids();
    }
    ids_.assign(L, {});
    norms_.assign(L, {});
    vectors_.assign(L, {});
  }

  //! Appends the rows, ids first_id, first_id + 1, ..., each to its nearest centroid's list.
  void add(std::span<const float> vectors, std::uint64_t first_id) {
    trinity::detail::require(trained(), "index", "is not trained. Fix: train() on a sample first");
    const std::size_t n = rows_in(vectors, "vectors");
    std::vector<float> scratch;
    std::vector<std::size_t> assigned(n);
    assign(vectors.data(), n, assigned.data(), scratch);
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t l = assigned[r];
      ids_[l].push_back(first_id + r);
      norms_[l].push_back(cache::detail::dot(isa_, vectors.data() + r * d_, vectors.data() + r * d_, d_));
      vectors_[l].insert(vectors_[l].end(), vectors.begin() + static_cast<std::ptrdiff_t>(r * d_),
                         vectors.begin() + static_cast<std::ptrdiff_t>((r + 1) * d_));
    }
    size_ += n;
  }

  //! The nprobe lists whose centroids lie nearest the query, nearest first (ties: the lower list).
  [[nodiscard]] std::vector<std::size_t> probe(std::span<const float> query, std::size_t nprobe) const {
    check_query(query, nprobe);
    std::vector<std::pair<float, std::size_t>> by(o_.lists);
    const auto dist = centroid_distances(query.data());
    for (std::size_t l = 0; l < o_.lists; ++l) by[l] = {dist[l], l};
    std::partial_sort(by.begin(), by.begin() + static_cast<std::ptrdiff_t>(nprobe), by.end());
    std::vector<std::size_t> out(nprobe);
    for (std::size_t i = 0; i < nprobe; ++i) out[i] = by[i].second;
    return out;
  }

  //! Scores one list's rows (ids, squared norms and row-major vectors, wherever they live) into `best`.
  void scan(std::span<const std::uint64_t> ids, std::span<const float> norms, std::span<const float> vectors,
            std::span<const float> query, cache::detail::top_k& best) const {
    const float q_norm = cache::detail::dot(isa_, query.data(), query.data(), d_);
    for (std::size_t r = 0; r < ids.size(); ++r)
      best.offer(ids[r], -detail::scan_distance(isa_, query.data(), vectors.data() + r * d_, norms[r], q_norm, d_));
  }

  //! The k nearest vectors of the nprobe nearest lists, most similar first.
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k, std::size_t nprobe) const {
    cache::detail::top_k best(k);
    for (const auto l : probe(query, nprobe)) scan(ids_[l], norms_[l], vectors_[l], query, best);
    return std::move(best).sorted();
  }

  [[nodiscard]] std::size_t dimension() const noexcept { return d_; }
  [[nodiscard]] std::size_t lists() const noexcept { return o_.lists; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool trained() const noexcept { return !centroids_.empty(); }
  [[nodiscard]] std::span<const float> centroids() const noexcept { return centroids_; }
  [[nodiscard]] std::span<const std::uint64_t> ids(std::size_t l) const { return ids_.at(l); }
  [[nodiscard]] std::span<const float> norms(std::size_t l) const { return norms_.at(l); }
  [[nodiscard]] std::span<const float> vectors(std::size_t l) const { return vectors_.at(l); }
  //! Bytes a scan of list l reads: its ids (8 bytes each), squared norms (4 each) and vectors (4·dimension each).
  [[nodiscard]] std::size_t list_bytes(std::size_t l) const { return ids_.at(l).size() * (12 + 4 * d_); }
  //! Bytes scoring the centroids reads, every search.
  [[nodiscard]] std::size_t centroid_bytes() const noexcept { return centroids_.size() * sizeof(float); }

 private:
  std::size_t rows_in(std::span<const float> v, const char* field) const {
    trinity::detail::require(
        !v.empty() && v.size() % d_ == 0, field,
        std::to_string(v.size()) + " floats are not whole vectors of dimension " + std::to_string(d_));
    return v.size() / d_;
  }
  void check_query(std::span<const float> query, std::size_t nprobe) const {
    trinity::detail::require(trained(), "index", "is not trained. Fix: train() on a sample first");
    trinity::detail::require(
        query.size() == d_, "query",
        "has " + std::to_string(query.size()) + " values; the index's dimension is " + std::to_string(d_));
    trinity::detail::require(nprobe >= 1 && nprobe <= o_.lists, "nprobe",
                             "must be from 1 to the " + std::to_string(o_.lists) + " lists");
  }
  // ‖c‖² − 2⟨x, c⟩ for every centroid c: x's squared distance to each, less ‖x‖², which ranks them the same.
  // Four centroids a tile on the CPU's widest unit; the scalar difference loop made k-means the slowest part of
  // building an index (and of every test that builds one).
  void centroid_products(const float* x, float* out) const {
    const std::size_t L = o_.lists;
    std::size_t l = 0;
    for (; l + 4 <= L; l += 4) cache::detail::tile<4, 1>(isa_, centroids_.data() + l * d_, x, d_, out + l, 1);
    for (; l < L; ++l) out[l] = cache::detail::dot(isa_, centroids_.data() + l * d_, x, d_);
    for (l = 0; l < L; ++l) out[l] = centroid_norms_[l] - 2.0f * out[l];
  }
  std::vector<float> centroid_distances(const float* x) const {
    std::vector<float> out(o_.lists);
    centroid_products(x, out.data());
    const float x_norm = cache::detail::dot(isa_, x, x, d_);
    for (auto& v : out) v += x_norm;
    return out;
  }
  std::size_t nearest(const float* x, std::vector<float>& dist) const {
    dist.resize(o_.lists);
    centroid_products(x, dist.data());
    return static_cast<std::size_t>(std::min_element(dist.begin(), dist.end()) - dist.begin());
  }
  // Every row's nearest centroid, four rows a pass over the centroids (tile<4, 4>: a centroid read once serves
  // four rows), the last few one at a time.
  void assign(const float* rows, std::size_t n, std::size_t* out, std::vector<float>& scratch) const {
    const std::size_t L = o_.lists;
    scratch.resize(4 * L);
    std::size_t r = 0;
    for (; r + 4 <= n; r += 4) {
      const float* x = rows + r * d_;
      std::size_t l = 0;
      for (; l + 4 <= L; l += 4)
        cache::detail::tile<4, 4>(isa_, centroids_.data() + l * d_, x, d_, scratch.data() + l * 4, 4);
      for (; l < L; ++l) cache::detail::tile<1, 4>(isa_, centroids_.data() + l * d_, x, d_, scratch.data() + l * 4, 4);
      for (std::size_t q = 0; q < 4; ++q) {
        std::size_t best = 0;
        float best_d = std::numeric_limits<float>::infinity();
        for (l = 0; l < L; ++l)
          if (const float v = centroid_norms_[l] - 2.0f * scratch[l * 4 + q]; v < best_d) best_d = v, best = l;
        out[r + q] = best;
      }
    }
    for (; r < n; ++r) out[r] = nearest(rows + r * d_, scratch);
  }
  void measure_centroids() {
    centroid_norms_.resize(o_.lists);
    for (std::size_t l = 0; l < o_.lists; ++l)
      centroid_norms_[l] = cache::detail::dot(isa_, centroids_.data() + l * d_, centroids_.data() + l * d_, d_);
  }

  std::size_t d_;
  ivf_options o_;
  std::vector<float> centroids_, centroid_norms_;
  cache::detail::isa isa_;
  std::vector<std::vector<std::uint64_t>> ids_;
  std::vector<std::vector<float>> norms_, vectors_;
  std::size_t size_ = 0;
};

}  // namespace trinity::retrieval
