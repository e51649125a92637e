#pragma once
//! \file
//! The approximate index: hnswlib's HNSW graph (Malkov & Yashunin), inner
//! product space, behind the SimilarityIndex concept. Target trinity::hnsw
//! (Debian: libhnswlib-dev, header-only; see detail/hnsw_graph.hpp for how it is included). Removal marks a graph node
//! deleted and keeps it for reuse: the next add takes the slot back (hnswlib 0.6 re-links an updated node), so a cache
//! that churns never grows the graph past its high-water mark, and never rebuilds it. The graph doubles its room
//! (hnswlib's resize, no rebuild) only when every slot is live.
//!
//!   cache::hnsw_index index(768, {.ef_search = 64});
//!   index.add(42, embedding);
//!   auto best = index.search(query, 1);

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <trinity/cache/hnsw/detail/hnsw_graph.hpp>

#include <trinity/cache/metric.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/error.hpp>

namespace trinity::cache {

struct hnsw_options {
  metric measure = metric::cosine;
  std::size_t m = 16;                 //!< links per node (hnswlib's M)
  std::size_t ef_construction = 200;  //!< candidate list while linking
  std::size_t ef_search = 64;         //!< candidate list while searching: recall against speed
  std::size_t initial_capacity = 1024;
  std::size_t seed = 100;
  //! Threads search_batch may use; 0 takes std::thread::hardware_concurrency().
  unsigned threads = 0;
};

class hnsw_index {
 public:
  using similarity_index_concept = similarity_index_tag;
  static constexpr std::string_view name = "hnsw";

  explicit hnsw_index(std::size_t dimension, hnsw_options opts = {}) : dimension_(dimension), opts_(opts) {
    trinity::detail::require(dimension > 0 && dimension <= (std::size_t{1} << 16), "dimension",
                             "must be from 1 to 65536");
    trinity::detail::require(opts.m >= 2 && opts.m <= 256, "m", "must be from 2 to 256");
    trinity::detail::require(opts.ef_construction >= 1, "ef_construction", "must be at least 1");
    trinity::detail::require(opts.ef_search >= 1, "ef_search", "must be at least 1");
    capacity_ = std::max<std::size_t>(opts.initial_capacity, 16);
    graph_ = detail::make_hnsw_graph(dimension, capacity_, opts.m, opts.ef_construction, opts.seed);
    graph_->set_ef(opts.ef_search);
    ef_search_ = opts.ef_search;
  }

  [[nodiscard]] std::size_t dimension() const noexcept { return dimension_; }
  [[nodiscard]] std::size_t size() const noexcept { return slot_of_.size(); }
  //! Graph nodes in use, live or deleted.
  [[nodiscard]] std::size_t slots() const noexcept { return next_slot_; }
  //! Slots the graph has room for before it must grow.
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  void set_ef_search(std::size_t ef) {
    trinity::detail::require(ef >= 1, "ef_search", "must be at least 1");
    graph_->set_ef(ef);
    ef_search_ = ef;
  }

  void add(std::uint64_t id, std::span<const float> key) {
    trinity::detail::require(!slot_of_.contains(id), "id",
                             std::to_string(id) + " is already in the index; remove it first");
    const auto v = detail::prepare(key, dimension_, opts_.measure, "key");
    std::size_t slot = 0;
    if (!free_slots_.empty()) {
      // A deleted node's slot: hnswlib unmarks it and re-links it at the new vector.
      slot = free_slots_.back();
      graph_->add(v.data(), slot);
      free_slots_.pop_back();
    } else {
      if (next_slot_ == capacity_) {
        graph_->resize(capacity_ * 2);
        capacity_ *= 2;
      }
      slot = next_slot_;
      graph_->add(v.data(), slot);
      ++next_slot_;
    }
    slot_of_.emplace(id, slot);
    if (id_of_.size() <= slot) id_of_.resize(slot + 1);
    id_of_[slot] = id;
  }

  bool remove(std::uint64_t id) {
    const auto it = slot_of_.find(id);
    if (it == slot_of_.end()) return false;
    graph_->mark_deleted(it->second);
    free_slots_.push_back(it->second);
    slot_of_.erase(it);
    return true;
  }

  [[nodiscard]] bool contains(std::uint64_t id) const { return slot_of_.contains(id); }

  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k) const {
    const auto q = detail::prepare(query, dimension_, opts_.measure, "query");
    std::vector<neighbour> out;
    if (slot_of_.empty() || k == 0) return out;
    for (const auto& [distance, slot] : graph_->search(q.data(), std::min(k, slot_of_.size())))
      out.push_back({id_of_[slot], 1.0f - distance});  // hnswlib's distance is 1 - <q, x>
    return out;
  }

  //! One result list per query (queries concatenated, dimension() floats each), searched on several threads:
  //! hnswlib's search only reads the graph, so queries run side by side.
  [[nodiscard]] std::vector<std::vector<neighbour>> search_batch(std::span<const float> queries, std::size_t k) const {
    const std::size_t nq = detail::batch_count(queries, dimension_);
    std::vector<std::vector<neighbour>> out(nq);
    const std::size_t threads = std::min<std::size_t>(nq, detail::thread_count(opts_.threads));
    auto work = [&](std::size_t t) {
      for (std::size_t i = nq * t / threads; i < nq * (t + 1) / threads; ++i)
        out[i] = search(queries.subspan(i * dimension_, dimension_), k);
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    return out;
  }

 private:
  std::size_t dimension_;
  hnsw_options opts_;
  std::unique_ptr<detail::hnsw_graph> graph_;
  std::size_t capacity_ = 0, next_slot_ = 0;
  std::size_t ef_search_ = 64;
  std::unordered_map<std::uint64_t, std::size_t> slot_of_;
  std::vector<std::uint64_t> id_of_;
  std::vector<std::size_t> free_slots_;  //!< deleted nodes, taken back by the next adds
};

static_assert(diagnose_similarity_index<hnsw_index>());

}  // namespace trinity::cache
