// The prefix tree's flat edge table (cache/detail/child_index.hpp) against a std::map, with every hash forced
// into a handful of homes so that probe runs wrap the table and deletions shift long runs back.
#include <catch2/catch.hpp>

#include <trinity/cache/detail/child_index.hpp>

#include <deque>
#include <map>
#include <random>
#include <vector>

namespace cache_child_index_test {

using namespace trinity;

namespace {
struct edge_node {
  const edge_node* parent = nullptr;
  std::vector<std::uint32_t> block;
};
}  // namespace

TEST_CASE("the edge table finds exactly what was inserted and not erased, whatever the hashes collide on",
          "[cache][prefix]") {
  for (const std::uint64_t homes : std::vector<std::uint64_t>{1, 3, 64, std::uint64_t{1} << 40}) {
    cache::detail::child_index<edge_node> index;
    std::deque<edge_node> nodes;
    const edge_node parents[2]{};
    std::map<std::pair<int, std::vector<std::uint32_t>>, edge_node*> model;
    std::mt19937_64 gen(homes);
    // The same colliding hash for blocks that differ only after their first token, or only in their parent.
    const auto hash_of = [&](int p, const std::vector<std::uint32_t>& b) -> std::uint64_t {
      return (std::uint64_t{b[0]} * std::uint64_t{0x9e3779b97f4a7c15} + static_cast<std::uint64_t>(p)) % homes;
    };
    std::size_t wrong = 0;
    for (int op = 0; op < 20000; ++op) {
      const int p = static_cast<int>(gen() % 2);
      const std::vector<std::uint32_t> b{static_cast<std::uint32_t>(gen() % 50), static_cast<std::uint32_t>(gen() % 3)};
      const auto h = hash_of(p, b);
      const auto key = std::make_pair(p, b);
      const auto m = model.find(key);
      edge_node* found = index.find(&parents[p], std::span<const std::uint32_t>(b), h);
      wrong += found != (m == model.end() ? nullptr : m->second);
      if (m == model.end() && gen() % 3 != 0) {
        auto& n = nodes.emplace_back(edge_node{&parents[p], b});
        index.insert(&n, h);
        model.emplace(key, &n);
      } else if (m != model.end() && gen() % 2 == 0) {
        index.erase(m->second, h);
        model.erase(m);
      }
      wrong += index.size() != model.size();
    }
    for (const auto& [key, n] : model)
      wrong += index.find(&parents[key.first], std::span<const std::uint32_t>(key.second),
                          hash_of(key.first, key.second)) != n;
    INFO(homes << " homes");
    CHECK(wrong == 0);
    CHECK(model.size() > 100);
  }
}

}  // namespace cache_child_index_test
