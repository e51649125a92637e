// A layer's values moved between the parts layouts hold: cut and place by a map of indices, parameters and state
// planes alike, and recut from one layout's parts to another's (a tensor-parallel slice at another size).
#include <catch2/catch.hpp>

#include <trinity/parallel/tensor_slice.hpp>
#include <trinity/shard/layer_values.hpp>

#include <cstddef>
#include <vector>

namespace shard_layer_values_test {

using namespace trinity;
using parallel::linear_split;

namespace {
// Parameter k is k, state plane s's value k is 1000·(s + 1) + k: every value names its place.
shard::layer_values numbered(std::size_t n, std::size_t states_per, long steps) {
  shard::layer_values v{std::vector<float>(n), std::vector<float>(n * states_per), states_per, steps};
  for (std::size_t k = 0; k < n; ++k) {
    v.parameters[k] = static_cast<float>(k);
    for (std::size_t s = 0; s < states_per; ++s) v.states[s * n + k] = static_cast<float>(1000 * (s + 1) + k);
  }
  return v;
}
}  // namespace

TEST_CASE("cut takes a part's values, parameters and state planes alike, and place puts them back",
          "[shard][checkpoint]") {
  const auto whole = numbered(10, 2, 7);
  const std::vector<std::size_t> at{9, 0, 4};
  const auto part = shard::cut(whole, at);
  CHECK(part.parameters == std::vector<float>{9, 0, 4});
  CHECK(part.states == std::vector<float>{1009, 1000, 1004, 2009, 2000, 2004});
  CHECK(part.states_per == 2);
  CHECK(part.steps == 7);
  shard::layer_values back{std::vector<float>(10, -1.0f), std::vector<float>(20, -1.0f), 2, 7};
  shard::place(back, part, at);
  for (std::size_t k = 0; k < 10; ++k) {
    const bool put = k == 9 || k == 0 || k == 4;
    CHECK(back.parameters[k] == (put ? whole.parameters[k] : -1.0f));
    CHECK(back.states[10 + k] == (put ? whole.states[10 + k] : -1.0f));
  }
  // A part of another size, or of another run's steps, is refused; so is an index past the layer.
  CHECK_THROWS_WITH(shard::place(back, part, std::vector<std::size_t>{1, 2}),
                    Catch::Contains("a part of 3 values after 7 steps does not fill 2 places"));
  auto later = part;
  later.steps = 8;
  CHECK_THROWS_WITH(shard::place(back, later, at), Catch::Contains("another model or run"));
  CHECK_THROWS_WITH(shard::cut(whole, std::vector<std::size_t>{10}),
                    Catch::Contains("index 10 is past the layer's 10"));
}

TEST_CASE("recut turns one tensor-parallel size's slices into another's, as cutting the whole layer would",
          "[shard][checkpoint]") {
  for (const auto kind : {linear_split::column, linear_split::row}) {
    const parallel::linear_layer layer{.in = 6, .out = 12};
    auto whole = numbered(layer.values(), 2, 3);
    const auto at = [&](std::size_t t, std::size_t r) { return parallel::slice_indices(kind, layer, t, r); };
    for (const std::size_t from : {1u, 2u, 3u, 6u}) {
      std::vector<shard::layer_values> saved;
      for (std::size_t r = 0; r < from; ++r) saved.push_back(shard::cut(whole, at(from, r)));
      if (kind == linear_split::row && from > 1)  // a row layer's b on every slice: slice 0's copy is the one kept
        for (std::size_t r = 1; r < from; ++r) saved[r].parameters.back() = -5.0f;
      for (const std::size_t to : {1u, 2u, 3u, 6u})
        for (std::size_t r = 0; r < to; ++r) {
          INFO((kind == linear_split::column ? "column" : "row")
               << " layer, " << from << " slices to " << to << ", rank " << r);
          const auto got = shard::recut(saved, layer.values(), at, to, r);
          const auto want = shard::cut(whole, at(to, r));
          CHECK(got.parameters == want.parameters);
          CHECK(got.states == want.states);
          CHECK(got.steps == 3);
        }
    }
  }
}

}  // namespace shard_layer_values_test
