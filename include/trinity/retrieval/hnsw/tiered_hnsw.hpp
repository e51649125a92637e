#pragma once
//! \file
//! An HNSW graph whose nodes live on tiers (the CXL report's §5.2 retrieval case, for a graph index): every node
//! of the upper layers, which every search's greedy descent reads, in the fast tier; of the bottom layer's, those
//! most visited per byte (measured on other queries, as the dynamic tiering policy ranks objects) while the fast
//! tier's budget lasts; the rest in the capacity tier. A node is its vector and its link lists, stored in its
//! tier's memory (place::tier_resource). The search is hnswlib's, step for step, with hnswlib's own distance
//! kernel, so placement never changes a result: the tests hold it equal to hnsw_index::search. Each vector and
//! link list read is counted on the tier it lives in. follow() moves the bottom layer's nodes online instead, by
//! the dynamic tiering policy (place/dynamic_tiering.hpp), as tiered_ivf::follow moves lists.
//!
//!   place::tier_resource hbm("hbm", 64_MB), cxl("cxl-capacity", 4_GB);
//!   retrieval::tiered_hnsw tiered(index, {&hbm, &cxl});
//!   tiered.place(tiered.visit_frequency(training_queries, 10, 64), hbm.capacity());
//!   auto hits = tiered.search(query, 10, 64);   // index.search's hits; tiered.traffic() per tier

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <numeric>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/concepts/similarity_index.hpp>
#include <trinity/error.hpp>
#include <trinity/place/dynamic_tiering.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/hnsw/hnsw_index.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>

namespace trinity::retrieval {

class tiered_hnsw {
 public:
  //! The upper layers' nodes in tiers[0], every other node in tiers[1]; the index outlives this.
  tiered_hnsw(const hnsw_index& index, std::vector<place::tier_resource*> tiers)
      : g_(index.layers()), tiers_(checked(tiers)), tier_(g_.level.size(), 1) {
    for (auto* t : tiers_) vectors_.emplace_back(t), links_.emplace_back(t);
    for (std::size_t n = 0; n < tier_.size(); ++n)
      if (g_.level[n] > 0) tier_[n] = 0;
    lay_out();
    traffic_ = {{0.0, 0.0}, {0.0, 0.0}, 0};
  }

  //! Each node's bytes: its vector and every link list it has.
  [[nodiscard]] std::size_t node_bytes(std::size_t n) const {
    std::size_t b = g_.dimension * sizeof(float);
    for (const auto& l : g_.links.at(n)) b += (l.size() + 1) * sizeof(std::uint32_t);
    return b;
  }
  //! The upper layers' bytes: what the fast tier holds before any bottom-layer node.
  [[nodiscard]] std::size_t upper_bytes() const {
    std::size_t b = 0;
    for (std::size_t n = 0; n < g_.level.size(); ++n)
      if (g_.level[n] > 0) b += node_bytes(n);
    return b;
  }

  //! Reads per node over `queries` (row-major) searched at k and ef: the nodes' access frequency.
  [[nodiscard]] std::vector<double> visit_frequency(std::span<const float> queries, std::size_t k, std::size_t ef) {
    const std::size_t d = g_.dimension;
    trinity::detail::require(!queries.empty() && queries.size() % d == 0, "queries",
                             "must be whole vectors of the index's dimension, at least one");
    std::vector<double> f(g_.level.size(), 0.0);
    const auto saved = traffic_;
    const auto saved_reads = reads_;
    for (std::size_t q = 0; q * d < queries.size(); ++q) walk<true>(queries.subspan(q * d, d), k, ef, &f);
    traffic_ = saved, reads_ = saved_reads;
    return f;
  }

  //! The upper layers, then the bottom layer's nodes most read per byte (`frequency`, one per node), into tier 0
  //! while `fast_bytes` lasts (a node that does not fit is passed over for smaller ones); the rest into tier 1. The
  //! upper layers stay in tier 0 whatever the budget: every search reads them. Returns the bytes placed in tier 0.
  std::size_t place(std::span<const double> frequency, std::size_t fast_bytes) {
    trinity::detail::require(frequency.size() == g_.level.size(), "frequency", "needs one access frequency a node");
    policy_.reset();  // a static placement ends following
    std::vector<std::size_t> order(g_.level.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto heat = [&](std::size_t n) { return frequency[n] / static_cast<double>(node_bytes(n)); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return heat(a) > heat(b); });
    std::size_t used = upper_bytes();
    for (std::size_t n = 0; n < tier_.size(); ++n) tier_[n] = g_.level[n] > 0 ? 0 : 1;
    for (const auto n : order)
      if (g_.level[n] == 0 && used + node_bytes(n) <= fast_bytes)  // unvisited ones last, if room is left
        used += node_bytes(n), tier_[n] = 0;
    lay_out();
    return used;
  }

  //! From here on the bottom layer's nodes move online: every vector a search reads is an access to
  //! place::dynamic_tiering (sampled, decayed, rate-limited, with hysteresis, `o`) over what `fast_bytes` leaves
  //! beside the upper layers, and the capacity tier; when an epoch ends the graph is laid out again where the policy
  //! puts its nodes. The upper layers stay fast. Returns the policy, to read its migrations from.
  const place::dynamic_tiering& follow(place::tiering_options o, std::size_t fast_bytes) {
    const double fast = static_cast<double>(fast_bytes) - static_cast<double>(upper_bytes());
    trinity::detail::require(fast >= 0, "fast_bytes",
                             "must hold at least the upper layers (" + std::to_string(upper_bytes()) + " bytes)");
    bottom_.clear();
    object_.assign(g_.level.size(), not_followed);
    std::vector<double> sizes;
    double total = 0;
    for (std::size_t v = 0; v < g_.level.size(); ++v)
      if (g_.level[v] == 0) {
        object_[v] = static_cast<std::uint32_t>(bottom_.size());
        bottom_.push_back(static_cast<std::uint32_t>(v));
        total += sizes.emplace_back(static_cast<double>(node_bytes(v)));
      }
    policy_.emplace(std::move(sizes), std::vector<double>{fast, total}, o);
    seen_ = 0;
    touched_.clear();
    relay_to_policy();
    return *policy_;
  }

  //! hnsw_index::search's hits, each vector and link list read from its node's tier; the reads counted.
  [[nodiscard]] std::vector<neighbour> search(std::span<const float> query, std::size_t k, std::size_t ef) {
    trinity::detail::require(
        query.size() == g_.dimension, "query",
        "has " + std::to_string(query.size()) + " values; the index's dimension is " + std::to_string(g_.dimension));
    trinity::detail::require(k >= 1, "k", "must be at least 1");
    ++traffic_.queries;
    auto hits = walk<false>(query, k, ef, nullptr);
    if (policy_) follow_reads();
    return hits;
  }

  [[nodiscard]] std::size_t tier_of(std::size_t node) const { return tier_.at(node); }
  [[nodiscard]] std::size_t nodes() const noexcept { return tier_.size(); }
  [[nodiscard]] const tier_traffic& traffic() const noexcept { return traffic_; }
  //! traffic() taken apart, per tier: the vectors scored, the link lists read and those lists' bytes.
  struct walk_reads {
    double vectors[2] = {0, 0}, lists[2] = {0, 0}, list_bytes[2] = {0, 0};
  };
  [[nodiscard]] const walk_reads& reads() const noexcept { return reads_; }
  void reset_traffic() { traffic_ = {{0.0, 0.0}, {0.0, 0.0}, 0}, reads_ = {}; }

 private:
  using scored = std::pair<float, std::uint32_t>;
  // hnswlib's CompareByFirst: the queues order by distance alone, so equal distances fall as hnswlib's do.
  struct by_distance {
    bool operator()(const scored& a, const scored& b) const noexcept { return a.first < b.first; }
  };
  using queue = std::priority_queue<scored, std::vector<scored>, by_distance>;

  static std::vector<place::tier_resource*> checked(const std::vector<place::tier_resource*>& tiers) {
    trinity::detail::require(tiers.size() == 2 && tiers[0] && tiers[1], "tiers", "a fast tier and a capacity tier");
    return tiers;
  }

  // Every node's vector and link lists copied into its tier's arena, fast tier first so a full tier refuses early.
  void lay_out() {
    const std::size_t d = g_.dimension, n = tier_.size();
    for (std::size_t t = 0; t < 2; ++t) {
      // Emptied to nothing first: a tier holds one layout at a time.
      vectors_[t].clear(), vectors_[t].shrink_to_fit();
      links_[t].clear(), links_[t].shrink_to_fit();
      std::size_t floats = 0, words = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (tier_[i] == t) floats += d, words += node_bytes(i) / sizeof(std::uint32_t) - d;
      vectors_[t].reserve(floats);
      links_[t].reserve(words);
    }
    at_.assign(n, {});
    for (auto& l : link_at_) l.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const auto t = tier_[i];
      at_[i] = {static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(vectors_[t].size() / d)};
      link_at_[t].push_back(links_[t].size());
      vectors_[t].insert(vectors_[t].end(), g_.vectors.begin() + static_cast<std::ptrdiff_t>(i * d),
                         g_.vectors.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
      for (const auto& l : g_.links[i]) {  // level 0's list first, each level's after the one below
        links_[t].push_back(static_cast<std::uint32_t>(l.size()));
        links_[t].insert(links_[t].end(), l.begin(), l.end());
      }
    }
    for (std::size_t t = 0; t < 2; ++t) vector_base_[t] = vectors_[t].data(), link_base_[t] = links_[t].data();
    visited_.assign(n, 0);
    generation_ = 0;
  }

  // The walk's vector reads handed to the policy after the walk, which read every node where it lay; an epoch that
  // ended on the way moves nodes, and the graph is laid out again where the policy now puts them.
  void follow_reads() {
    for (const auto v : touched_)
      if (object_[v] != not_followed) policy_->access(object_[v]);
    touched_.clear();
    if (policy_->migrations() == seen_) return;
    seen_ = policy_->migrations();
    relay_to_policy();
  }
  void relay_to_policy() {
    for (std::size_t i = 0; i < bottom_.size(); ++i)
      tier_[bottom_[i]] = policy_->tier_of(static_cast<std::uint32_t>(i)) == 0 ? 0 : 1;
    lay_out();
  }

  // The query's distance to node n, its vector read from the node's tier.
  template <bool Visits>
  float distance(const float* q, std::uint32_t n, std::vector<double>* f) {
    const auto& at = at_[n];
    vector_reads_[at.tier] += 1;
    if constexpr (Visits) (*f)[n] += 1;
    if constexpr (!Visits)
      if (policy_) touched_.push_back(n);
    return g_.distance(q, vector_base_[at.tier] + std::size_t{at.slot} * g_.dimension, g_.distance_parameter);
  }
  // Node n's link list at `level`: its count, then its neighbours, read from the node's tier.
  std::span<const std::uint32_t> links(std::uint32_t n, int level) {
    const auto& at = at_[n];
    const std::uint32_t* list = link_base_[at.tier] + link_at_[at.tier][at.slot];
    for (int l = 0; l < level; ++l) list += *list + 1;
    link_words_[at.tier] += *list + 1;
    link_reads_[at.tier] += 1;
    return {list + 1, *list};
  }

  // hnswlib's searchKnn (no deleted nodes): a greedy descent through the upper layers, then searchBaseLayerST.
  template <bool Visits>
  std::vector<neighbour> walk(std::span<const float> query, std::size_t k, std::size_t ef, std::vector<double>* f) {
    const float* q = query.data();
    vector_reads_[0] = vector_reads_[1] = link_reads_[0] = link_reads_[1] = link_words_[0] = link_words_[1] = 0;
    std::uint32_t current = g_.entry;
    float best = distance<Visits>(q, current, f);
    for (int level = g_.top_level; level > 0; --level)
      for (bool changed = true; changed;) {
        changed = false;
        for (const auto c : links(current, level))
          if (const float dist = distance<Visits>(q, c, f); dist < best) best = dist, current = c, changed = true;
      }
    const std::size_t beam = std::max(ef, k);
    if (++generation_ == 0) std::fill(visited_.begin(), visited_.end(), 0), generation_ = 1;
    queue top, candidates;
    float bound = distance<Visits>(q, current, f);
    top.emplace(bound, current);
    candidates.emplace(-bound, current);
    visited_[current] = generation_;
    while (!candidates.empty()) {
      const auto [negated, node] = candidates.top();
      if (-negated > bound) break;
      candidates.pop();
      const auto next = links(node, 0);
      for (const auto c : next) __builtin_prefetch(&at_[c]);
      for (std::size_t j = 0; j < next.size(); ++j) {
        const auto c = next[j];
        if (j + 1 < next.size()) {  // the next neighbour's vector on its way while this one is scored
          const auto& a = at_[next[j + 1]];
          __builtin_prefetch(vector_base_[a.tier] + std::size_t{a.slot} * g_.dimension);
        }
        if (visited_[c] == generation_) continue;
        visited_[c] = generation_;
        const float dist = distance<Visits>(q, c, f);
        if (top.size() < beam || bound > dist) {
          candidates.emplace(-dist, c);
          top.emplace(dist, c);
          if (top.size() > beam) top.pop();
          bound = top.top().first;
        }
      }
    }
    while (top.size() > k) top.pop();
    for (std::size_t t = 0; t < 2; ++t) {
      traffic_.bytes[t] +=
          static_cast<double>(vector_reads_[t] * g_.dimension * sizeof(float) + link_words_[t] * sizeof(std::uint32_t));
      traffic_.reads[t] += static_cast<double>(vector_reads_[t] + link_reads_[t]);
      reads_.vectors[t] += static_cast<double>(vector_reads_[t]);
      reads_.lists[t] += static_cast<double>(link_reads_[t]);
      reads_.list_bytes[t] += static_cast<double>(link_words_[t] * sizeof(std::uint32_t));
    }
    std::vector<std::pair<float, std::uint64_t>> found;
    for (; !top.empty(); top.pop()) found.emplace_back(top.top().first, g_.label[top.top().second]);
    std::sort(found.begin(), found.end());
    std::vector<neighbour> out;
    for (const auto& [dist, id] : found) out.push_back({id, -dist});
    return out;
  }

  retrieval::detail::hnsw_layers g_;
  std::vector<place::tier_resource*> tiers_;
  std::vector<std::size_t> tier_;
  std::vector<std::pmr::vector<float>> vectors_;        // per tier, from its resource
  std::vector<std::pmr::vector<std::uint32_t>> links_;  // per tier: each list its count, then its nodes
  // 8 bytes a node, read for every neighbour scored: its tier and its slot there (its vector at slot x d).
  struct node_place {
    std::uint32_t tier = 0, slot = 0;
  };
  std::vector<node_place> at_;
  std::vector<std::size_t> link_at_[2];  // per tier, per slot: where its level-0 list starts
  const float* vector_base_[2] = {nullptr, nullptr};
  const std::uint32_t* link_base_[2] = {nullptr, nullptr};
  std::uint64_t vector_reads_[2] = {0, 0}, link_reads_[2] = {0, 0}, link_words_[2] = {0, 0};  // this walk's
  std::vector<std::uint32_t> visited_;
  std::uint32_t generation_ = 0;
  tier_traffic traffic_;
  walk_reads reads_;
  // follow()'s: the policy, its objects (the bottom layer's nodes) and each node's object, a walk's reads.
  static constexpr std::uint32_t not_followed = ~std::uint32_t{0};
  std::optional<place::dynamic_tiering> policy_;
  std::vector<std::uint32_t> bottom_, object_, touched_;
  std::uint64_t seen_ = 0;  // its migrations applied so far
};

}  // namespace trinity::retrieval
