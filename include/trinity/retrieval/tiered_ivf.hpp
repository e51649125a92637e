#pragma once
//! \file
//! An IVF index whose inverted lists live on tiers (the CXL report's §5.2 retrieval case): the centroids stay in
//! the fast tier, every list is one object of a place::tiered_store (its ids, then its vectors), and a search
//! reads each probed list from wherever it lives and counts the bytes and reads per tier. Placement is by
//! measured access frequency: place() fills the fast tier with the lists most probed per byte, as the dynamic
//! tiering policy ranks objects (place/dynamic_tiering.hpp), and leaves the rest in the capacity tier; follow()
//! hands the lists to that policy itself, which moves them online as the searches' probes shift.
//! Placement never changes a result: the same lists are scanned in the same order wherever they live.
//!
//!   place::tier_resource hbm("hbm", 64_MB), cxl("cxl-capacity", 4_GB);
//!   retrieval::tiered_ivf tiered(index, {&hbm, &cxl});
//!   tiered.place(retrieval::probe_frequency(index, training_queries, 8), hbm.capacity());
//!   auto hits = tiered.search(query, 10, 8);     // index.search's hits; tiered.traffic() per tier

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/place/dynamic_tiering.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/place/tiered_store.hpp>
#include <trinity/retrieval/ivf_index.hpp>

namespace trinity::retrieval {

//! Bytes and reads per tier, summed over the searches counted.
struct tier_traffic {
  std::vector<double> bytes, reads;
  std::size_t queries = 0;
};

//! The share of `queries` (row-major) whose nprobe nearest lists include each list: the lists' access frequency.
inline std::vector<double> probe_frequency(const ivf_index& index, std::span<const float> queries, std::size_t nprobe) {
  const std::size_t d = index.dimension(), n = queries.size() / d;
  trinity::detail::require(n >= 1 && queries.size() % d == 0, "queries",
                           "must be whole vectors of the index's dimension, at least one");
  std::vector<double> f(index.lists(), 0.0);
  for (std::size_t q = 0; q < n; ++q)
    for (const auto l : index.probe(queries.subspan(q * d, d), nprobe)) f[l] += 1.0 / static_cast<double>(n);
  return f;
}

class tiered_ivf {
 public:
  //! Every list starts in the last (capacity) tier; `tiers` fastest first, the index outlives this.
  tiered_ivf(const ivf_index& index, std::vector<place::tier_resource*> tiers)
      : index_(&index), store_(tiers), tier_count_(tiers.size()) {
    trinity::detail::require(index.trained(), "index", "is not trained. Fix: train() and add() first");
    trinity::detail::require(tier_count_ >= 2, "tiers", "a tiered index needs a fast tier and a capacity tier");
    for (std::size_t l = 0; l < index.lists(); ++l) store_.put(l, bytes_of(l), tier_count_ - 1);
    traffic_ = empty_traffic();
  }

  //! The lists most probed per byte (`frequency`, one per list) into tier 0 while `fast_bytes` lasts (the
  //! centroids counted first), the rest into the last tier. Returns the bytes placed in tier 0.
  std::size_t place(std::span<const double> frequency, std::size_t fast_bytes) {
    trinity::detail::require(frequency.size() == index_->lists(), "frequency", "needs one access frequency a list");
    std::vector<std::size_t> order(index_->lists());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto heat = [&](std::size_t l) {
      return index_->list_bytes(l) ? frequency[l] / static_cast<double>(index_->list_bytes(l)) : 0.0;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return heat(a) > heat(b); });
    std::size_t used = std::min(fast_bytes, index_->centroid_bytes());
    // Down first, so the fast tier has room for what comes up.
    std::vector<bool> fast(index_->lists(), false);
    for (const auto l : order)
      if (frequency[l] > 0 && used + index_->list_bytes(l) <= fast_bytes) used += index_->list_bytes(l), fast[l] = true;
    for (std::size_t l = 0; l < index_->lists(); ++l)
      if (!fast[l]) move(l, tier_count_ - 1);
    for (std::size_t l = 0; l < index_->lists(); ++l)
      if (fast[l]) move(l, 0);
    return used;
  }

  //! From here on the lists move online: every probe is an access to place::dynamic_tiering (sampled, decayed,
  //! rate-limited, with hysteresis, `o`), over a fast tier of `fast_bytes` (the centroids counted first) and the
  //! capacity tier; at each epoch's end its migrations are applied to the lists. The lists start where the policy
  //! starts them (filled in order). Returns the policy, to read its migrations from.
  const place::dynamic_tiering& follow(place::tiering_options o, std::size_t fast_bytes) {
    std::vector<double> sizes(index_->lists());
    double total = 0;
    for (std::size_t l = 0; l < sizes.size(); ++l)  // an empty list still takes a slot: a byte, for the policy
      total += sizes[l] = std::max<double>(1.0, static_cast<double>(index_->list_bytes(l)));
    const double fast = static_cast<double>(fast_bytes) - static_cast<double>(index_->centroid_bytes());
    trinity::detail::require(fast >= 0, "fast_bytes", "must hold at least the centroids");
    policy_.emplace(std::move(sizes), std::vector<double>{fast, total}, o);
    seen_ = 0;
    apply([&](auto&& to) {
      for (std::size_t l = 0; l < index_->lists(); ++l) to(l, policy_->tier_of(static_cast<std::uint32_t>(l)));
    });
    return *policy_;
  }

  //! index.search's hits, each probed list read from its tier; the reads counted in traffic().
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k, std::size_t nprobe) {
    const auto lists = index_->probe(query, nprobe);
    traffic_.bytes[0] += static_cast<double>(index_->centroid_bytes());
    traffic_.reads[0] += 1;
    ++traffic_.queries;
    cache::detail::top_k best(k);
    for (const auto l : lists) {
      const auto where = store_.info(l)->tier;
      const auto raw = *store_.get(l);
      const std::size_t n = index_->ids(l).size();
      // The object is the list's ids, then its norms, then its vectors (bytes_of): read them where they lie.
      const auto* ids = reinterpret_cast<const std::uint64_t*>(raw.data());
      const auto* norms = reinterpret_cast<const float*>(raw.data() + n * sizeof(std::uint64_t));
      const auto* vectors = norms + n;
      index_->scan({ids, n}, {norms, n}, {vectors, n * index_->dimension()}, query, best);
      traffic_.bytes[where] += static_cast<double>(raw.size());
      traffic_.reads[where] += 1;
    }
    if (policy_) {  // the probes counted after the scans: this search read the lists where they were
      for (const auto l : lists) {
        policy_->access(static_cast<std::uint32_t>(l));
        if (policy_->migrations() == seen_) continue;  // no epoch ended, or it moved nothing
        seen_ = policy_->migrations();
        apply([&](auto&& to) {
          for (const auto& m : policy_->moves()) to(m.object, m.to);
        });
      }
    }
    return std::move(best).sorted();
  }

  [[nodiscard]] std::size_t tier_of(std::size_t list) const { return store_.info(list)->tier; }
  [[nodiscard]] const tier_traffic& traffic() const noexcept { return traffic_; }
  void reset_traffic() { traffic_ = empty_traffic(); }

 private:
  tier_traffic empty_traffic() const {
    return {std::vector<double>(tier_count_, 0.0), std::vector<double>(tier_count_, 0.0), 0};
  }
  std::vector<std::byte> bytes_of(std::size_t l) const {
    const auto ids = index_->ids(l);
    const auto norms = index_->norms(l);
    const auto vectors = index_->vectors(l);
    std::vector<std::byte> out(ids.size_bytes() + norms.size_bytes() + vectors.size_bytes());
    if (ids.empty()) return out;
    std::memcpy(out.data(), ids.data(), ids.size_bytes());
    std::memcpy(out.data() + ids.size_bytes(), norms.data(), norms.size_bytes());
    std::memcpy(out.data() + ids.size_bytes() + norms.size_bytes(), vectors.data(), vectors.size_bytes());
    return out;
  }
  // Lists to the policy's tiers (0 fast, 1 capacity: this index's first and last), down before up so that the
  // fast tier has room for what comes up. `each(to)` calls to(list, policy tier) for every list to place.
  template <class Each>
  void apply(Each&& each) {
    for (const bool down : {true, false})
      each([&](std::size_t l, std::uint32_t t) {
        if ((t != 0) == down) move(l, t == 0 ? 0 : tier_count_ - 1);
      });
  }
  void move(std::size_t l, std::size_t tier) {
    if (store_.info(l)->tier == tier) return;
    trinity::detail::require(store_.migrate(l, tier), "tiers",
                             "tier " + std::to_string(tier) + " refused list " + std::to_string(l) +
                                 " (full). Fix: a fast-tier budget within its capacity");
  }

  const ivf_index* index_;
  place::tiered_store<std::size_t> store_;
  std::size_t tier_count_;
  tier_traffic traffic_;
  std::optional<place::dynamic_tiering> policy_;  // follow()'s, when lists move online
  std::uint64_t seen_ = 0;                        // its migrations applied so far
};

}  // namespace trinity::retrieval
