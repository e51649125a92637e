#pragma once
//! \file
//! hnswlib's HNSW graph in L2 space, built and searched by hnswlib itself, and copied out layer by layer so that a
//! search can walk it wherever its parts are placed. hnswlib comes in through cache/hnsw/detail/hnsw_graph.hpp's
//! include (a private copy per translation unit, see there), so the graph is reached through an interface.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <trinity/cache/hnsw/detail/hnsw_graph.hpp>

namespace trinity::retrieval::detail {

//! The distance hnswlib's L2 space computes (its SIMD kernel for the dimension), as a plain function.
using l2_distance = float (*)(const void*, const void*, const void*);

//! A built graph, copied out: node n is hnswlib's internal id n.
struct hnsw_layers {
  std::size_t dimension = 0;
  std::uint32_t entry = 0;
  int top_level = -1;
  std::vector<int> level;                                      //!< each node's top level
  std::vector<std::uint64_t> label;                            //!< each node's id
  std::vector<std::vector<std::vector<std::uint32_t>>> links;  //!< [node][level]: its neighbours there
  std::vector<float> vectors;                                  //!< node-major
  l2_distance distance = nullptr;
  const void* distance_parameter = nullptr;  //!< valid while the graph that gave it lives
};

class l2_graph {
 public:
  virtual ~l2_graph() = default;
  virtual void add(const float* v, std::uint64_t label) = 0;
  virtual void set_ef(std::size_t ef) = 0;
  //! (squared L2 distance, label) of the k nearest, nearest first (ties: the lower label).
  virtual std::vector<std::pair<float, std::uint64_t>> search(const float* q, std::size_t k) const = 0;
  [[nodiscard]] virtual hnsw_layers layers() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
};

namespace {

class hnswlib_l2_graph final : public l2_graph {
 public:
  hnswlib_l2_graph(std::size_t dimension, std::size_t capacity, std::size_t m, std::size_t ef_construction,
                   std::size_t seed)
      : space_(dimension), graph_(&space_, capacity, m, ef_construction, seed), dimension_(dimension) {}
  void add(const float* v, std::uint64_t label) override { graph_.addPoint(v, static_cast<std::size_t>(label)); }
  void set_ef(std::size_t ef) override { graph_.setEf(ef); }
  std::vector<std::pair<float, std::uint64_t>> search(const float* q, std::size_t k) const override {
    auto found = graph_.searchKnn(q, k);
    std::vector<std::pair<float, std::uint64_t>> out(found.size());
    for (std::size_t i = out.size(); i-- > 0; found.pop()) out[i] = {found.top().first, found.top().second};
    return out;
  }
  hnsw_layers layers() const override {
    hnsw_layers out;
    const std::size_t n = graph_.cur_element_count;
    out.dimension = dimension_;
    out.entry = static_cast<std::uint32_t>(graph_.enterpoint_node_);
    out.top_level = graph_.maxlevel_;
    out.level.assign(graph_.element_levels_.begin(), graph_.element_levels_.begin() + static_cast<std::ptrdiff_t>(n));
    out.label.resize(n);
    out.links.resize(n);
    out.vectors.resize(n * dimension_);
    for (std::size_t i = 0; i < n; ++i) {
      const auto id = static_cast<cache::detail::hnswlib_api::tableint>(i);
      out.label[i] = graph_.getExternalLabel(id);
      const auto* v = reinterpret_cast<const float*>(graph_.getDataByInternalId(id));
      std::copy(v, v + dimension_, out.vectors.begin() + static_cast<std::ptrdiff_t>(i * dimension_));
      out.links[i].resize(static_cast<std::size_t>(out.level[i]) + 1);
      for (int l = 0; l <= out.level[i]; ++l) {
        auto* list = l == 0 ? graph_.get_linklist0(id) : graph_.get_linklist(id, l);
        const auto count = graph_.getListCount(list);
        const auto* first = reinterpret_cast<const std::uint32_t*>(list + 1);
        out.links[i][static_cast<std::size_t>(l)].assign(first, first + count);
      }
    }
    out.distance = space_.get_dist_func();
    out.distance_parameter = space_.get_dist_func_param();
    return out;
  }
  std::size_t size() const override { return graph_.cur_element_count; }

 private:
  mutable cache::detail::hnswlib_api::L2Space space_;
  cache::detail::hnswlib_api::HierarchicalNSW<float> graph_;
  std::size_t dimension_;
};

[[maybe_unused]] std::unique_ptr<l2_graph> make_l2_graph(std::size_t dimension, std::size_t capacity, std::size_t m,
                                                         std::size_t ef_construction, std::size_t seed) {
  return std::make_unique<hnswlib_l2_graph>(dimension, capacity, m, ef_construction, seed);
}

}  // namespace
}  // namespace trinity::retrieval::detail
