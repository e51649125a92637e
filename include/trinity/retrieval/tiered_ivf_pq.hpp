#pragma once
//! \file
//! An IVF index with product-quantized codes in the fast tier and the full vectors in a capacity tier (FAISS's
//! IndexIVFPQ behind an IndexRefineFlat, split over tiers): a search scans the probed lists' codes where they are
//! cheap to read, keeps the `rerank` nearest by the codes' approximate distance, and reads only those vectors
//! from the capacity tier to rank them exactly. Compute (a distance table a probed list) and a little recall buy
//! 4·d / subspaces times fewer fast-tier bytes than IVF-Flat's lists, and the capacity tier sees `rerank` random
//! reads a query instead of whole lists.
//!
//! With rerank at least the vectors the probed lists hold, the answer is IVF-Flat's exactly: the same lists, the
//! same exact distance (ivf_index::scan's), the same tie-break.
//!
//!   place::tier_resource hbm("hbm", 64_MB), cxl("cxl-capacity", 4_GB);
//!   retrieval::tiered_ivf_pq pq(index, 16, sample, {&hbm, &cxl});   // 16-byte codes of index's vectors
//!   auto hits = pq.search(query, 10, 8, 100);   // 8 lists' codes, the 100 best re-ranked from the vectors
//!   pq.traffic();                               // bytes and reads per tier

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <span>
#include <string>
#include <vector>

#include <trinity/cache/detail/inner_product.hpp>
#include <trinity/cache/detail/top_k.hpp>
#include <trinity/error.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/product_quantizer.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>

namespace trinity::retrieval {

class tiered_ivf_pq {
 public:
  //! Codes of `subspaces` bytes for every vector of `index` (trained on the residuals of `sample`'s rows to their
  //! nearest centroid), in tiers[0]; the index's vectors and norms copied into tiers[1]. The index outlives this.
  tiered_ivf_pq(const ivf_index& index, std::size_t subspaces, std::span<const float> sample,
                std::vector<place::tier_resource*> tiers)
      : index_(&index),
        pq_(index.dimension(), subspaces),
        codes_(fast_tier(tiers)),
        ids_(tiers[0]),
        norms_(tiers[1]),
        vectors_(tiers[1]),
        isa_(cache::detail::best_isa()) {
    trinity::detail::require(index.trained(), "index", "is not trained. Fix: train() and add() first");
    const std::size_t d = index.dimension();
    trinity::detail::require(!sample.empty() && sample.size() % d == 0, "sample",
                             "must be whole vectors of the index's dimension");
    std::vector<float> residuals(sample.size());
    for (std::size_t r = 0; r * d < sample.size(); ++r) {
      const auto x = sample.subspan(r * d, d);
      residual(x, index.probe(x, 1).front(), residuals.data() + r * d);
    }
    pq_.train(residuals);
    codes_.reserve(index.size() * subspaces);
    ids_.reserve(index.size());
    norms_.reserve(index.size());
    vectors_.reserve(index.size() * d);
    start_.push_back(0);
    residual_.resize(d);
    table_.resize(subspaces * product_quantizer::centroids);
    std::vector<std::uint8_t> code(subspaces);
    for (std::size_t l = 0; l < index.lists(); ++l) {
      const auto v = index.vectors(l);
      for (std::size_t i = 0; i < index.ids(l).size(); ++i) {
        residual(v.subspan(i * d, d), l, residual_.data());
        pq_.encode(residual_, code);
        codes_.insert(codes_.end(), code.begin(), code.end());
      }
      ids_.insert(ids_.end(), index.ids(l).begin(), index.ids(l).end());
      norms_.insert(norms_.end(), index.norms(l).begin(), index.norms(l).end());
      vectors_.insert(vectors_.end(), v.begin(), v.end());
      start_.push_back(ids_.size());
    }
    traffic_ = {{0.0, 0.0}, {0.0, 0.0}, 0};
  }

  //! The k nearest of the `rerank` vectors nearest by their codes in the nprobe nearest lists, ranked by the exact
  //! distance read from the capacity tier; rerank 0 ranks by the codes alone and reads no vector.
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k, std::size_t nprobe,
                                              std::size_t rerank) {
    const auto lists = index_->probe(query, nprobe);
    const std::size_t d = index_->dimension(), m = pq_.subspaces();
    ++traffic_.queries;
    count(0, static_cast<double>(index_->centroid_bytes() + pq_.codebook_bytes()));
    cache::detail::top_k candidates(rerank ? rerank : k);  // by position; similarity: the negated code distance
    for (const auto l : lists) {
      residual(query, l, residual_.data());
      pq_.distance_table(residual_, table_);
      for (std::size_t p = start_[l]; p < start_[l + 1]; ++p)
        candidates.offer(p, -pq_.distance(table_, codes_.data() + p * m));
      count(0, static_cast<double>((start_[l + 1] - start_[l]) * m));
    }
    const auto kept = std::move(candidates).sorted();
    count(0, static_cast<double>(kept.size() * sizeof(std::uint64_t)));  // the kept positions' ids
    cache::detail::top_k best(k);
    if (rerank == 0) {
      for (const auto& c : kept) best.offer(ids_[c.id], c.similarity);
      return std::move(best).sorted();
    }
    const float q_norm = cache::detail::dot(isa_, query.data(), query.data(), d);
    for (const auto& c : kept) {
      best.offer(ids_[c.id],
                 -detail::scan_distance(isa_, query.data(), vectors_.data() + c.id * d, norms_[c.id], q_norm, d));
      traffic_.bytes[1] += static_cast<double>(sizeof(float) * (d + 1));
      traffic_.reads[1] += 1;
    }
    return std::move(best).sorted();
  }

  [[nodiscard]] const tier_traffic& traffic() const noexcept { return traffic_; }
  void reset_traffic() { traffic_ = {{0.0, 0.0}, {0.0, 0.0}, 0}; }
  [[nodiscard]] const product_quantizer& quantizer() const noexcept { return pq_; }
  //! Vectors in list l.
  [[nodiscard]] std::size_t list_size(std::size_t l) const { return start_.at(l + 1) - start_.at(l); }
  //! Bytes in the fast tier (codes and ids) and the capacity tier (norms and vectors).
  [[nodiscard]] std::size_t fast_bytes() const noexcept { return codes_.size() + ids_.size() * sizeof(std::uint64_t); }
  [[nodiscard]] std::size_t capacity_bytes() const noexcept {
    return (norms_.size() + vectors_.size()) * sizeof(float);
  }

 private:
  static place::tier_resource* fast_tier(const std::vector<place::tier_resource*>& tiers) {
    trinity::detail::require(tiers.size() == 2 && tiers[0] && tiers[1], "tiers",
                             "a fast tier for the codes and a capacity tier for the vectors");
    return tiers[0];
  }
  // x less list l's centroid: what the codes quantize, and what a query's tables are of.
  void residual(std::span<const float> x, std::size_t l, float* out) const {
    const std::size_t d = index_->dimension();
    for (std::size_t k = 0; k < d; ++k) out[k] = x[k] - index_->centroids()[l * d + k];
  }
  void count(std::size_t tier, double bytes) {
    traffic_.bytes[tier] += bytes;
    traffic_.reads[tier] += 1;
  }

  const ivf_index* index_;
  product_quantizer pq_;
  std::pmr::vector<std::uint8_t> codes_;  // position-major: list 0's codes, then list 1's, ...
  std::pmr::vector<std::uint64_t> ids_;
  std::pmr::vector<float> norms_, vectors_;
  std::vector<std::size_t> start_;       // list l holds positions start_[l] .. start_[l + 1]
  std::vector<float> residual_, table_;  // a search's scratch: a residual and its distance table
  cache::detail::isa isa_;
  tier_traffic traffic_;
};

}  // namespace trinity::retrieval
