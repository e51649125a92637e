// The rank layout as (shape, stride): compact strides, coordinates and ranks round trip, the groups along axes
// against the closed formula, and the step model's spans read from it.
#include <catch2/catch.hpp>

#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/rank_layout.hpp>
#include <trinity/parallel/scheme.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace model_rank_layout_test {

using namespace trinity;
using namespace trinity::model;

TEST_CASE("rank layout: compact strides, and every rank's coordinate gives the rank back", "[model][parallel]") {
  parallel_layout l;
  l.tp = 2, l.cp = 3, l.dp = 2, l.pp = 2;
  const auto ranks = rank_layout_of(l);
  CHECK(ranks.shape == std::array<std::size_t, 4>{2, 3, 2, 2});
  CHECK(ranks.stride == std::array<std::size_t, 4>{1, 2, 6, 12});
  CHECK(ranks.size() == 24);
  for (std::size_t r = 0; r < 24; ++r) {
    const auto [t, c, d, p] = ranks.coordinate(r);
    CHECK(r == t + l.tp * (c + l.cp * (d + l.dp * p)));  // Megatron-Core's order, tensor innermost
    CHECK(ranks({t, c, d, p}) == r);
  }
  // Rank 17 = t 1 + 2·(c 2 + 3·(d 0 + 2·p 1)).
  CHECK(ranks.along(17, {rank_axis::tensor}) == std::vector<int>{16, 17});
  CHECK(ranks.along(17, {rank_axis::context}) == std::vector<int>{13, 15, 17});
  CHECK(ranks.along(17, {rank_axis::data}) == std::vector<int>{17, 23});
  CHECK(ranks.along(17, {rank_axis::pipeline}) == std::vector<int>{5, 17});
  // Two axes, the first given innermost: context varies fastest.
  CHECK(ranks.along(17, {rank_axis::context, rank_axis::data}) == std::vector<int>{13, 15, 17, 19, 21, 23});
  CHECK(ranks.along(17, {rank_axis::data, rank_axis::context}) == std::vector<int>{13, 19, 15, 21, 17, 23});
}

TEST_CASE("rank layout: the step model's spans are the layout's", "[model][parallel]") {
  parallel_layout l;
  l.tp = 4, l.cp = 2, l.dp = 8, l.pp = 4, l.ep = 8, l.etp = 2;
  const auto ranks = rank_layout_of(l);
  CHECK(span(l, layout_group::tensor) == 4);
  CHECK(span(l, layout_group::context) == 8);
  CHECK(span(l, layout_group::stage) == 64);
  CHECK(span(l, layout_group::pipeline) == 256);
  CHECK(span(l, layout_group::expert) == 16);
  CHECK(ranks.span(rank_axis::pipeline) == ranks.size());
  const auto fold = expert_fold(l);
  CHECK(fold.shape == std::array<std::size_t, 3>{2, 8, 4});
  CHECK(fold.size() == ranks.span(rank_axis::data));  // the fold regroups one stage's ranks
}

TEST_CASE("rank layout: another order is other strides, and its groups follow them", "[model][parallel]") {
  // The pipeline innermost (strides (pp, pp·tp, pp·tp·cp, 1)): a layout some stacks use across nodes.
  const parallel_ranks ranks{{2, 1, 3, 4}, {4, 8, 8, 1}};
  CHECK(ranks.coordinate(13) == std::array<std::size_t, 4>{1, 0, 1, 1});
  CHECK(ranks.along(13, {rank_axis::pipeline}) == std::vector<int>{12, 13, 14, 15});
  CHECK(ranks.along(13, {rank_axis::tensor}) == std::vector<int>{9, 13});
  CHECK(ranks.along(13, {rank_axis::data}) == std::vector<int>{5, 13, 21});
}

TEST_CASE("rank layout: groups_of refuses expert degrees of 0 before dividing by them", "[model][parallel]") {
  parallel_layout l;
  l.dp = 4, l.ep = 0;
  CHECK_THROWS_WITH(parallel::groups_of(l, 4, 0), Catch::Contains("ep and etp must be at least 1"));
}

}  // namespace model_rank_layout_test
