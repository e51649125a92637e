// The scheme type: its groups, its layout, and a pipeline composed with each ZeRO stage over the data-parallel
// group training the model DDP trains.
#include <catch2/catch.hpp>

#include "scheme_check.hpp"

#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard/adam.hpp>
#include <trinity/shard/data_parallel.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace parallel_scheme_test {

using namespace trinity;

TEST_CASE("a parallel scheme lays ranks out as Megatron-Core does, and every group partitions the world",
          "[parallel][scheme]") {
  using s = parallel::scheme<parallel::tensor_parallel<2>, parallel::pipeline<2, 2>, parallel::context_parallel<2>,
                             shard::zero<1>>;
  static_assert(s::model_parallel == 8);
  const auto l = s::layout(16);
  CHECK(model::to_string(l) == "tp=2,pp=2,vpp=2,cp=2,dp=2,mbs=1,recompute=none,sp=off,zero=1");
  // Rank 13 = t 1 + 2·(c 0 + 2·(d 1 + 2·p 1)): tensor innermost, the pipeline outermost.
  const auto g = parallel::groups_of<s>(16, 13);
  CHECK(g.tp == std::vector<int>{12, 13});
  CHECK(g.cp == std::vector<int>{13, 15});
  CHECK(g.pp == std::vector<int>{5, 13});
  CHECK(g.dp == std::vector<int>{9, 13});
  CHECK(g.weights == std::vector<int>{9, 11, 13, 15});
  // Every group lies in the consecutive ranks the step model's span gives it (a domain of that many GPUs
  // holds it whole), and the pipeline spans the world.
  const auto within = [](const std::vector<int>& group, std::size_t span) {
    const auto [lo, hi] = std::minmax_element(group.begin(), group.end());
    return static_cast<std::size_t>(*lo) / span == static_cast<std::size_t>(*hi) / span;
  };
  for (int r = 0; r < 16; ++r) {
    const auto mine = parallel::groups_of<s>(16, r);
    CHECK(within(mine.tp, model::span(l, model::layout_group::tensor)));
    CHECK(within(mine.cp, model::span(l, model::layout_group::context)));
    CHECK(within(mine.weights, model::span(l, model::layout_group::stage)));
    CHECK_FALSE(within(mine.pp, model::span(l, model::layout_group::stage)));
  }
  CHECK(model::span(l, model::layout_group::stage) == 8);
  CHECK(model::span(l, model::layout_group::pipeline) == 16);
  // A dense layout's expert groups are each rank alone and, for the slices, its stage.
  CHECK(g.expert == std::vector<int>{13});
  CHECK(g.expert_tensor == std::vector<int>{13});
  CHECK(g.expert_data == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  for (auto member : {&parallel::rank_groups::tp, &parallel::rank_groups::cp, &parallel::rank_groups::pp,
                      &parallel::rank_groups::dp, &parallel::rank_groups::weights}) {
    std::set<std::vector<int>> groups;
    std::vector<int> seen(16, 0);
    for (int r = 0; r < 16; ++r) {
      const auto mine = parallel::groups_of<s>(16, r).*member;
      CHECK(std::find(mine.begin(), mine.end(), r) != mine.end());
      if (groups.insert(mine).second)
        for (const int x : mine) ++seen[static_cast<std::size_t>(x)];
    }
    CHECK(seen == std::vector<int>(16, 1));  // each rank in exactly one group of each kind
  }
  CHECK_THROWS_WITH(s::layout(12), Catch::Contains("world") && Catch::Contains("multiple of 8"));
}

TEST_CASE("a mixture's groups fold each stage's ranks: expert tensor innermost, then expert, then expert data",
          "[parallel][scheme][moe]") {
  auto l = model::parallel_layout{};
  l.tp = 2, l.pp = 2, l.dp = 4, l.ep = 2, l.etp = 2;  // 16 ranks, stages of 8
  // Rank 13: stage 1 (ranks 8-15), local 5 = etp rank 1 + 2·(expert rank 0 + 2·expert-data rank 1).
  const auto g = parallel::groups_of(l, 16, 13);
  CHECK(g.expert == std::vector<int>{13, 15});
  CHECK(g.expert_tensor == std::vector<int>{12, 13});
  CHECK(g.expert_data == std::vector<int>{9, 13});
  for (auto member :
       {&parallel::rank_groups::expert, &parallel::rank_groups::expert_tensor, &parallel::rank_groups::expert_data}) {
    std::vector<int> seen(16, 0);
    std::set<std::vector<int>> groups;
    for (int r = 0; r < 16; ++r) {
      const auto mine = parallel::groups_of(l, 16, r).*member;
      CHECK(std::find(mine.begin(), mine.end(), r) != mine.end());
      CHECK(std::all_of(mine.begin(), mine.end(), [&](int x) { return x / 8 == r / 8; }));  // inside its stage
      if (groups.insert(mine).second)
        for (const int x : mine) ++seen[static_cast<std::size_t>(x)];
    }
    CHECK(seen == std::vector<int>(16, 1));
  }
  l.ep = 3;
  CHECK_THROWS_WITH(parallel::groups_of(l, 16, 0), Catch::Contains("ep·etp = 6 must divide a stage's tp·cp·dp = 8"));
}

TEMPLATE_TEST_CASE("a pipeline composed with a ZeRO stage over the data-parallel group trains what DDP trains",
                   "[parallel][scheme]", shard::replicate, shard::zero<1>, shard::zero<2>) {
  struct shape {
    std::size_t p, v, m;
  };
  for (const auto& [p, v, m] : {shape{2, 1, 4}, shape{4, 1, 4}, shape{2, 2, 4}, shape{4, 2, 8}}) {
    const std::size_t world = 8, replicas = world / p;
    const auto reference = scheme_check::ddp_reference(replicas, m);
    std::vector<std::vector<std::string>> bad(world);
    comm::thread_world w(static_cast<int>(world), std::chrono::seconds(30));
    comm::run_ranks(w, [&](comm::thread_communicator& c) {
      bad[static_cast<std::size_t>(c.rank())] = scheme_check::train<TestType>(c, p, v, m, reference);
    });
    for (std::size_t r = 0; r < world; ++r) {
      INFO(TestType::name << ", p=" << p << ", v=" << v << ", m=" << m << ", rank " << r);
      CHECK(bad[r] == std::vector<std::string>{});
    }
  }
}

TEST_CASE("ZeRO-3 without a pipeline, over the data-parallel group, trains what DDP trains", "[parallel][scheme]") {
  const auto reference = scheme_check::ddp_reference(8, 2);
  std::vector<std::vector<std::string>> bad(8);
  comm::thread_world w(8, std::chrono::seconds(30));
  comm::run_ranks(w, [&](comm::thread_communicator& c) {
    bad[static_cast<std::size_t>(c.rank())] = scheme_check::train<shard::zero<3>>(c, 1, 1, 2, reference);
  });
  for (std::size_t r = 0; r < 8; ++r) CHECK(bad[r] == std::vector<std::string>{});
}

TEMPLATE_TEST_CASE(
    "context parallelism composed with a ZeRO stage over the data and context ranks trains what DDP trains",
    "[parallel][scheme]", shard::replicate, shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  for (const std::size_t cp : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const std::size_t world = 8;
    const auto reference = scheme_check::context::reference(world / cp);
    std::vector<std::vector<std::string>> bad(world);
    comm::thread_world w(static_cast<int>(world), std::chrono::seconds(30));
    comm::run_ranks(w, [&](comm::thread_communicator& c) {
      bad[static_cast<std::size_t>(c.rank())] = scheme_check::context::train<TestType>(c, cp, reference);
    });
    for (std::size_t r = 0; r < world; ++r) {
      INFO(TestType::name << ", cp=" << cp << ", rank " << r);
      CHECK(bad[r] == std::vector<std::string>{});
    }
  }
}

TEST_CASE("a pipeline of stages whose weights are ZeRO-3 is refused with the fix, as the scheme type refuses it",
          "[parallel][scheme]") {
  const auto reference = scheme_check::ddp_reference(2, 2);
  std::vector<std::string> errors(4);
  comm::thread_world w(4, std::chrono::seconds(30));
  comm::run_ranks(w, [&](comm::thread_communicator& c) {
    try {
      scheme_check::train<shard::zero<3>>(c, 2, 1, 2, reference);
    } catch (const invalid_input& e) {
      errors[static_cast<std::size_t>(c.rank())] = e.what();
    }
  });
  for (const auto& e : errors) {
    CHECK(e.starts_with("shard_scheme: a pipeline of 2 stages with ZeRO-3 weights"));
    CHECK(e.find("Fix: use shard::zero<1> or shard::zero<2>") != std::string::npos);
  }
}

}  // namespace parallel_scheme_test
