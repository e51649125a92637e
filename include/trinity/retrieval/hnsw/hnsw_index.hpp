#pragma once
//! \file
//! The HNSW index for retrieval (Malkov & Yashunin, TPAMI 2018): hnswlib's graph in squared-L2 space, as FAISS's
//! IndexHNSWFlat searches. Vectors come in with ids; a search descends the upper layers greedily and searches
//! the bottom layer with a beam of `ef` (at least k). The knob ef trades compute and bytes read for recall.
//! Target trinity::hnsw (Debian: libhnswlib-dev).
//!
//!   retrieval::hnsw_index index(128, {.m = 16, .ef_construction = 200});
//!   index.add(vectors, 0);                      // ids 0, 1, ...
//!   auto hits = index.search(query, 10, 64);    // the 10 nearest a beam of 64 finds

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <trinity/concepts/similarity_index.hpp>
#include <trinity/error.hpp>
#include <trinity/retrieval/hnsw/detail/hnswlib_l2.hpp>

namespace trinity::retrieval {

struct hnsw_options {
  std::size_t m = 16;                 //!< links a node keeps in the upper layers (2m in the bottom one)
  std::size_t ef_construction = 200;  //!< the beam a node's neighbours are searched with as it is added
  std::size_t seed = 100;             //!< the levels' random draw (hnswlib's default)
};

class hnsw_index {
 public:
  hnsw_index(std::size_t dimension, hnsw_options o = {}) : d_(dimension), o_(o) {
    trinity::detail::require(dimension >= 1 && dimension <= (std::size_t{1} << 16), "dimension",
                             "must be from 1 to 65536");
    trinity::detail::require(o.m >= 2 && o.m <= 256, "m", "must be from 2 to 256");
    trinity::detail::require(o.ef_construction >= 1, "ef_construction", "must be at least 1");
  }

  //! Adds the rows, ids first_id, first_id + 1, ..., one at a time (hnswlib's order: deterministic for a seed).
  void add(std::span<const float> vectors, std::uint64_t first_id) {
    trinity::detail::require(
        !vectors.empty() && vectors.size() % d_ == 0, "vectors",
        std::to_string(vectors.size()) + " floats are not whole vectors of dimension " + std::to_string(d_));
    const std::size_t n = vectors.size() / d_;
    // hnswlib sizes its graph up front, so the index is built by one add().
    trinity::detail::require(graph_ == nullptr, "vectors",
                             "were added before; an hnsw_index is built by one add(). Fix: add every vector at once");
    graph_ = retrieval::detail::make_l2_graph(d_, n, o_.m, o_.ef_construction, o_.seed);
    for (std::size_t r = 0; r < n; ++r) graph_->add(vectors.data() + r * d_, first_id + r);
  }

  //! The k nearest a beam of max(ef, k) finds, nearest first (ties: the lower id); similarity is the negated
  //! squared distance.
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k, std::size_t ef) const {
    check(query, k);
    graph_->set_ef(ef);
    std::vector<neighbour> out;
    for (const auto& [distance, id] : graph_->search(query.data(), k)) out.push_back({id, -distance});
    return out;
  }

  //! The graph copied out, layer by layer (retrieval::tiered_hnsw walks it on tiers).
  [[nodiscard]] retrieval::detail::hnsw_layers layers() const {
    trinity::detail::require(graph_ != nullptr, "index", "is empty. Fix: add() its vectors first");
    return graph_->layers();
  }
  [[nodiscard]] std::size_t dimension() const noexcept { return d_; }
  [[nodiscard]] std::size_t size() const noexcept { return graph_ ? graph_->size() : 0; }

 private:
  void check(std::span<const float> query, std::size_t k) const {
    trinity::detail::require(graph_ != nullptr, "index", "is empty. Fix: add() its vectors first");
    trinity::detail::require(
        query.size() == d_, "query",
        "has " + std::to_string(query.size()) + " values; the index's dimension is " + std::to_string(d_));
    trinity::detail::require(k >= 1, "k", "must be at least 1");
  }

  std::size_t d_;
  hnsw_options o_;
  std::unique_ptr<retrieval::detail::l2_graph> graph_;
};

}  // namespace trinity::retrieval
