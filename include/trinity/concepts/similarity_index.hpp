#pragma once
//! \file
//! SimilarityIndex: embeddings in, the most similar stored ones out. An
//! approximate cache (cache/approximate_cache.hpp) asks it for the entry whose
//! key is nearest a request's, and reads the reuse depth off that similarity.
//! cache/flat_index.hpp (exact) and cache/hnsw/hnsw_index.hpp (hnswlib) model it.
//!
//!   struct my_index {
//!     using similarity_index_concept = trinity::similarity_index_tag;
//!     static constexpr std::string_view name = "mine";
//!     std::size_t dimension() const;  std::size_t size() const;
//!     void add(std::uint64_t id, std::span<const float> key);
//!     bool remove(std::uint64_t id);
//!     std::vector<trinity::neighbour> search(std::span<const float> query, std::size_t k) const;
//!   };

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>

namespace trinity {

//! One search result: the stored key's id and its similarity to the query (higher is nearer).
struct neighbour {
  std::uint64_t id = 0;
  float similarity = 0;
  friend bool operator==(const neighbour&, const neighbour&) = default;
};

template <class I>
concept opts_into_similarity_index = requires {
  typename I::similarity_index_concept;
}
&&std::same_as<typename I::similarity_index_concept, similarity_index_tag>;

//! dimension() and size(), both std::size_t.
template <class I>
concept has_index_shape = requires(const I& i) {
  { i.dimension() } -> std::same_as<std::size_t>;
  { i.size() } -> std::same_as<std::size_t>;
};

//! add(id, key) and remove(id) -> bool (false when no such id).
template <class I>
concept adds_and_removes = requires(I& i, std::uint64_t id, std::span<const float> key) {
  i.add(id, key);
  { i.remove(id) } -> std::same_as<bool>;
};

//! search(query, k) -> std::vector<neighbour>, most similar first.
template <class I>
concept searches = requires(const I& i, std::span<const float> q, std::size_t k) {
  { i.search(q, k) } -> std::same_as<std::vector<neighbour>>;
};

template <class I>
concept SimilarityIndex =
    opts_into_similarity_index<I> && names_itself<I> && has_index_shape<I> && adds_and_removes<I> && searches<I>;

template <class I>
consteval bool diagnose_similarity_index() {
  static_assert(opts_into_similarity_index<I>,
                "trinity: this type is not a SimilarityIndex. Fix: add `using similarity_index_concept = "
                "trinity::similarity_index_tag;`.");
  if constexpr (opts_into_similarity_index<I>) {
    static_assert(names_itself<I>,
                  "trinity: a SimilarityIndex names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(has_index_shape<I>,
                  "trinity: a SimilarityIndex tells its shape. Fix: add `std::size_t dimension() "
                  "const` and `std::size_t size() const`.");
    static_assert(adds_and_removes<I>,
                  "trinity: a SimilarityIndex adds and removes keys. Fix: add `void add(std::uint64_t, "
                  "std::span<const float>)` and `bool remove(std::uint64_t)`.");
    static_assert(searches<I>,
                  "trinity: a SimilarityIndex searches. Fix: add `std::vector<trinity::neighbour> "
                  "search(std::span<const float> query, std::size_t k) const`.");
  }
  return SimilarityIndex<I>;
}

}  // namespace trinity
