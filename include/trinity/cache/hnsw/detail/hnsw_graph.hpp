#pragma once
//! \file
//! hnswlib, made safe to include from many translation units. hnswlib 0.6
//! (Debian bookworm's) defines functions and variables in its headers without
//! `inline` or `static` (cpuid, AVX512Capable, InnerProductSIMD16Ext, ...), so
//! two files of one program that include it fail to link ("multiple
//! definition"); upstream made them static in 0.7. Until Debian ships that,
//! hnswlib is included here inside an unnamed namespace, every standard header
//! it needs having been included first, so each file gets a private copy, and
//! the graph is reached through an interface with external linkage. A file of
//! the user's may include hnswlib too, before or after this header: either way
//! `hnswlib::` names one copy (below).

#include <algorithm>
#include <assert.h>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <list>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <stdexcept>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#include <x86intrin.h>
#endif

namespace trinity::cache::detail {

//! The graph as the index uses it: slots are hnswlib labels.
class hnsw_graph {
 public:
  virtual ~hnsw_graph() = default;
  virtual void add(const float* v, std::size_t slot) = 0;  //!< slot must be new to this graph
  virtual std::vector<float> vector(std::size_t slot) const = 0;
  virtual void mark_deleted(std::size_t slot) = 0;
  virtual void resize(std::size_t capacity) = 0;
  virtual void set_ef(std::size_t ef) = 0;
  //! (1 - inner product, slot) of the k nearest, nearest first.
  virtual std::vector<std::pair<float, std::size_t>> search(const float* q, std::size_t k) const = 0;
};

// hnswlib 0.6's prefetches read one element past a link list (harmless on real hardware, fixed upstream),
// which AddressSanitizer reports; its scalar path has no prefetches, so sanitized builds take that one.
#if defined(__SANITIZE_ADDRESS__) && !defined(NO_MANUAL_VECTORIZATION)
#define NO_MANUAL_VECTORIZATION
#define TRINITY_UNDEF_NO_MANUAL_VECTORIZATION
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(NO_MANUAL_VECTORIZATION)
#define NO_MANUAL_VECTORIZATION
#define TRINITY_UNDEF_NO_MANUAL_VECTORIZATION
#endif
#endif

//! memcpy for hnswlib's own code: its getConnectionsWithLock copies an empty link list from a null
//! vector, which UBSan rightly reports, and which re-adding a deleted label (the slot reuse hnsw_index
//! relies on) reaches. A zero-length copy does nothing here.
inline void* hnswlib_memcpy(void* to, const void* from, std::size_t n) noexcept {
  return n ? std::memcpy(to, from, n) : to;
}

// hnswlib already included by the user's file, before this header (its SIMD macros say so): its #pragma once
// would make a second include empty, so that copy is the one used. Otherwise a private copy, and the name
// `hnswlib` at global scope an alias of it, so that the user's file including hnswlib after this header (empty
// then, under its #pragma once) still finds hnswlib::.
#if defined(PORTABLE_ALIGN32) || defined(USE_SSE)
#define TRINITY_HNSWLIB_INCLUDED_BEFORE
namespace hnswlib_api = ::hnswlib;
namespace {
#else
namespace {
#define memcpy(to, from, n) ::trinity::cache::detail::hnswlib_memcpy(to, from, n)
// NOLINTBEGIN: a third-party header, kept whole
#include <hnswlib/hnswlib.h>
// NOLINTEND
#undef memcpy
}  // namespace
namespace hnswlib_api = hnswlib;
namespace {
#endif

class hnswlib_graph final : public hnsw_graph {
 public:
  hnswlib_graph(std::size_t dimension, std::size_t capacity, std::size_t m, std::size_t ef_construction,
                std::size_t seed)
      : space_(dimension), graph_(&space_, capacity, m, ef_construction, seed) {}
  void add(const float* v, std::size_t slot) override { graph_.addPoint(v, slot); }
  std::vector<float> vector(std::size_t slot) const override { return graph_.template getDataByLabel<float>(slot); }
  void mark_deleted(std::size_t slot) override { graph_.markDelete(slot); }
  void resize(std::size_t capacity) override { graph_.resizeIndex(capacity); }
  void set_ef(std::size_t ef) override { graph_.setEf(ef); }
  std::vector<std::pair<float, std::size_t>> search(const float* q, std::size_t k) const override {
    auto found = graph_.searchKnn(q, k);
    std::vector<std::pair<float, std::size_t>> out(found.size());
    for (std::size_t i = out.size(); i-- > 0; found.pop()) out[i] = {found.top().first, found.top().second};
    return out;
  }

 private:
  hnswlib_api::InnerProductSpace space_;
  hnswlib_api::HierarchicalNSW<float> graph_;
};

[[maybe_unused]] std::unique_ptr<hnsw_graph> make_hnsw_graph(std::size_t dimension, std::size_t capacity, std::size_t m,
                                                             std::size_t ef_construction, std::size_t seed) {
  return std::make_unique<hnswlib_graph>(dimension, capacity, m, ef_construction, seed);
}
}  // namespace

}  // namespace trinity::cache::detail

#ifndef TRINITY_HNSWLIB_INCLUDED_BEFORE
namespace hnswlib = trinity::cache::detail::hnswlib_api;  // NOLINT: see above
#endif
#undef TRINITY_HNSWLIB_INCLUDED_BEFORE

#ifdef TRINITY_UNDEF_NO_MANUAL_VECTORIZATION
#undef NO_MANUAL_VECTORIZATION
#undef TRINITY_UNDEF_NO_MANUAL_VECTORIZATION
#endif
