#pragma once
//! \file
//! The exact index: every key scored against every query, on the widest
//! vector unit the CPU has, rows split across threads. A batch of queries is
//! scored in tiles of 4 rows × 4 queries, so each row read from memory serves
//! four queries; a single query streams the rows at memory bandwidth. Removal
//! moves the last row into the hole, so the rows stay dense.
//!
//!   cache::flat_index index(768);                  // cosine by default
//!   index.add(42, embedding);
//!   auto best = index.search(query, 1);            // best[0].id, best[0].similarity

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <trinity/cache/detail/inner_product.hpp>
#include <trinity/cache/detail/top_k.hpp>
#include <trinity/cache/metric.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/error.hpp>

namespace trinity::cache {

struct flat_options {
  metric measure = metric::cosine;
  //! Threads a large search may use; 0 takes std::thread::hardware_concurrency().
  unsigned threads = 0;
};

class flat_index {
 public:
  using similarity_index_concept = similarity_index_tag;
  static constexpr std::string_view name = "flat";

  explicit flat_index(std::size_t dimension, flat_options opts = {})
      : dimension_(dimension), opts_(opts), isa_(detail::best_isa()) {
    trinity::detail::require(dimension > 0 && dimension <= (std::size_t{1} << 20), "dimension",
                             "must be from 1 to 1048576");
    opts_.threads = detail::thread_count(opts_.threads);
  }

  [[nodiscard]] std::size_t dimension() const noexcept { return dimension_; }
  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  [[nodiscard]] metric measure() const noexcept { return opts_.measure; }
  //! Bytes the keys and ids occupy.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return rows_.capacity() * sizeof(float) + ids_.capacity() * sizeof(std::uint64_t);
  }
  void reserve(std::size_t n) {
    rows_.reserve(n * dimension_);
    ids_.reserve(n);
    row_of_.reserve(n);
  }

  void add(std::uint64_t id, std::span<const float> key) {
    trinity::detail::require(!row_of_.contains(id), "id",
                             std::to_string(id) + " is already in the index; remove it first");
    const auto v = detail::prepare(key, dimension_, opts_.measure, "key");
    rows_.insert(rows_.end(), v.begin(), v.end());
    ids_.push_back(id);
    row_of_.emplace(id, ids_.size() - 1);
  }

  bool remove(std::uint64_t id) {
    const auto it = row_of_.find(id);
    if (it == row_of_.end()) return false;
    const std::size_t row = it->second, last = ids_.size() - 1;
    row_of_.erase(it);
    if (row != last) {
      std::copy_n(rows_.begin() + static_cast<std::ptrdiff_t>(last * dimension_), dimension_,
                  rows_.begin() + static_cast<std::ptrdiff_t>(row * dimension_));
      ids_[row] = ids_[last];
      row_of_[ids_[row]] = row;
    }
    ids_.pop_back();
    rows_.resize(ids_.size() * dimension_);
    return true;
  }

  [[nodiscard]] bool contains(std::uint64_t id) const { return row_of_.contains(id); }

  //! The k stored keys most similar to query, most similar first (fewer when fewer are stored).
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k) const {
    trinity::detail::require(query.size() == dimension_, "query",
                             "has " + std::to_string(query.size()) + " floats; the index holds vectors of dimension " +
                                 std::to_string(dimension_));
    return std::move(search_batch(query, k).front());
  }

  //! One result list per query; queries are concatenated, dimension() floats each.
  [[nodiscard]] std::vector<std::vector<neighbour>> search_batch(std::span<const float> queries, std::size_t k) const {
    const std::size_t nq = detail::batch_count(queries, dimension_);
    std::vector<float> q;
    q.reserve(queries.size());
    for (std::size_t i = 0; i < nq; ++i) {
      const auto v = detail::prepare(queries.subspan(i * dimension_, dimension_), dimension_, opts_.measure, "query");
      q.insert(q.end(), v.begin(), v.end());
    }
    const std::size_t n = ids_.size();
    // Threads only where each gets enough work to pay for its start (about 4 MFLOP).
    const double work = static_cast<double>(n) * static_cast<double>(dimension_) * static_cast<double>(nq);
    const std::size_t threads = std::clamp<std::size_t>(static_cast<std::size_t>(work / (1 << 22)), 1,
                                                        std::min<std::size_t>(opts_.threads, n / 4 + 1));
    std::vector<std::vector<detail::top_k>> parts(threads, std::vector<detail::top_k>(nq, detail::top_k(k)));
    if (threads == 1) {
      scan(q.data(), nq, 0, n, parts[0]);
    } else {
      std::vector<std::thread> pool;
      pool.reserve(threads - 1);
      for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back([&, t] { scan(q.data(), nq, n * t / threads, n * (t + 1) / threads, parts[t]); });
      scan(q.data(), nq, 0, n / threads, parts[0]);
      for (auto& th : pool) th.join();
    }
    std::vector<std::vector<neighbour>> out(nq);
    for (std::size_t i = 0; i < nq; ++i) {
      for (std::size_t t = 1; t < threads; ++t) parts[0][i].merge(parts[t][i]);
      out[i] = std::move(parts[0][i]).sorted();
    }
    return out;
  }

 private:
  // Rows [r0, r1) against every query, into best (one collector per query).
  void scan(const float* q, std::size_t nq, std::size_t r0, std::size_t r1, std::vector<detail::top_k>& best) const {
    constexpr std::size_t R = 4, Q = 4, block = 64;  // 64 rows of 768 floats stay in L2 while every query passes
    const std::size_t d = dimension_;
    float s[R * Q];
    for (std::size_t b0 = r0; b0 < r1; b0 += block) {
      const std::size_t b1 = std::min(r1, b0 + block);
      for (std::size_t q0 = 0; q0 < nq; q0 += Q) {
        const std::size_t qn = std::min(Q, nq - q0);
        const float* qs = q + q0 * d;
        std::size_t r = b0;
        if (qn == Q) {
          for (; r + R <= b1; r += R) {
            detail::tile<4, 4>(isa_, rows_.data() + r * d, qs, d, s, Q);
            for (std::size_t i = 0; i < R; ++i)
              for (std::size_t j = 0; j < Q; ++j) best[q0 + j].offer(ids_[r + i], s[i * Q + j]);
          }
        }
        // Fewer than four queries: one row at a time, one stream through memory, which is what keeps a
        // single query at the memory bandwidth (interleaving four rows measured 20% slower).
        for (; r < b1; ++r)
          for (std::size_t j = 0; j < qn; ++j)
            best[q0 + j].offer(ids_[r], detail::dot(isa_, rows_.data() + r * d, qs + j * d, d));
      }
    }
  }

  std::size_t dimension_;
  flat_options opts_;
  detail::isa isa_;
  std::vector<float> rows_;
  std::vector<std::uint64_t> ids_;
  std::unordered_map<std::uint64_t, std::size_t> row_of_;
};

static_assert(diagnose_similarity_index<flat_index>());

}  // namespace trinity::cache
