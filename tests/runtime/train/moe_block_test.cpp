// train::moe_block, the trainer's mixture-of-experts block as a library piece, on comm::thread_world: over an expert
// group of 4 ranks, under either dispatcher policy (all-to-all, or deduplicated by node in nodes of 2), its outputs
// and input gradients are one rank's to rounding; each rank's count of a step's bytes is what its groups sent; the
// node-deduplicated dispatcher sends fewer; recomputing the block (forget, rebuild) gives the backward bit for bit;
// and a dispatcher that cannot run the split is refused, naming the field.
#include <catch2/catch.hpp>

#include <trinity/comm/thread_world.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/schemes.hpp>
#include <trinity/train/moe_block.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace train_moe_block_test {

using namespace trinity;
using rank_comm = comm::thread_communicator;
using block = train::moe_block<shard::replicate, rank_comm>;

constexpr std::size_t width = 8, rows_per_rank = 6, ranks = 4;

struct result {
  std::vector<float> y, dx;                  // every rank's rows, in rank order
  std::vector<std::uint64_t> sent, counted;  // each rank's, after one step
};

std::vector<float> rows(std::size_t n, double a) {
  std::vector<float> v(n * width);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(a * static_cast<double>(i) + 0.4));
  return v;
}

// One forward, backward and step of the block over `n` ranks (expert group of `ep`), each with its share of the
// same 24 rows; `recompute` drops what the forward kept and runs it again before the backward.
result run(train::moe_config m, std::size_t n, bool recompute = false) {
  const auto x = rows(ranks * rows_per_rank, 0.37), d = rows(ranks * rows_per_rank, 1.1);
  const std::size_t per = ranks * rows_per_rank / n;
  result out{std::vector<float>(x.size()), std::vector<float>(x.size()), std::vector<std::uint64_t>(n),
             std::vector<std::uint64_t>(n)};
  comm::thread_world world(static_cast<int>(n));
  comm::run_ranks(world, [&](rank_comm& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    shard::memory_ledger ledger;
    std::vector<int> stage(n);
    std::iota(stage.begin(), stage.end(), 0);
    const train::group_reductions<rank_comm> exact = [] {
      return train::any_reduction<comm::group<rank_comm>>::of(shard::exact_reduction{});
    };
    block b(c, train::data_parallel_expert_groups(static_cast<int>(n), c.rank(), m), stage, ledger, m, width, 5,
            shard::adam{}, exact);
    std::vector<float> h(x.begin() + static_cast<long>(r * per * width),
                         x.begin() + static_cast<long>((r + 1) * per * width));
    std::vector<float> delta(d.begin() + static_cast<long>(r * per * width),
                             d.begin() + static_cast<long>((r + 1) * per * width));
    std::vector<std::size_t> ids(per);
    std::iota(ids.begin(), ids.end(), r * per);
    auto kept = b.forward(h, ids);
    if (recompute) {
      block::forget(kept);
      kept = b.rebuild(kept, ids);
    }
    b.backward(kept, delta, /*ready=*/true);
    b.step(shard::adam{});
    std::copy(h.begin(), h.end(), out.y.begin() + static_cast<long>(r * per * width));
    std::copy(delta.begin(), delta.end(), out.dx.begin() + static_cast<long>(r * per * width));
    out.sent[r] = b.sent();
    out.counted[r] = b.counted();
  });
  return out;
}

train::moe_config experts(bool balanced, train::dispatcher d, std::size_t ep = ranks) {
  return {.experts = 8, .top_k = 2, .ep = ep, .balanced = balanced, .dispatch = d};
}

TEST_CASE("moe block: both dispatchers over 4 ranks give one rank's outputs and gradients, their bytes as counted",
          "[parallel][train]") {
  for (const bool balanced : {false, true}) {
    INFO((balanced ? "balanced routing" : "the router's"));
    const auto one = run(experts(balanced, train::all_to_all_dispatch{}, 1), 1);
    for (const train::dispatcher d :
         {train::dispatcher{train::all_to_all_dispatch{}}, train::dispatcher{train::node_dispatch{.node_ranks = 2}},
          train::dispatcher{train::node_dispatch{.node_ranks = 1}}}) {
      INFO("dispatcher " << d.index());
      const auto four = run(experts(balanced, d), ranks);
      for (std::size_t i = 0; i < one.y.size(); ++i) {
        CHECK(four.y[i] == Approx(one.y[i]).margin(1e-6));
        CHECK(four.dx[i] == Approx(one.dx[i]).margin(1e-6));
      }
      CHECK(four.sent == four.counted);
      for (const auto s : four.sent) CHECK(s > 0);
    }
  }
}

TEST_CASE("moe block: the node-deduplicated dispatcher sends fewer bytes than the all-to-all", "[parallel][train]") {
  const auto all = run(experts(true, train::all_to_all_dispatch{}), ranks);
  const auto by_node = run(experts(true, train::node_dispatch{.node_ranks = 2}), ranks);
  for (std::size_t r = 0; r < ranks; ++r) CHECK(by_node.sent[r] < all.sent[r]);
}

TEST_CASE("moe block: recomputing the block gives its backward bit for bit, its forward's bytes once more",
          "[parallel][train]") {
  for (const train::dispatcher d :
       {train::dispatcher{train::all_to_all_dispatch{}}, train::dispatcher{train::node_dispatch{.node_ranks = 2}}}) {
    const auto kept = run(experts(false, d), ranks), again = run(experts(false, d), ranks, true);
    CHECK(again.dx == kept.dx);
    CHECK(again.sent == again.counted);
    for (std::size_t r = 0; r < ranks; ++r) CHECK(again.sent[r] > kept.sent[r]);
  }
}

TEST_CASE("moe block: a node size that does not split the expert group is refused, naming the field", "[train]") {
  comm::thread_world world(1);
  rank_comm c(world, 0);
  shard::memory_ledger ledger;
  const train::group_reductions<rank_comm> exact = [] {
    return train::any_reduction<comm::group<rank_comm>>::of(shard::exact_reduction{});
  };
  auto m = experts(false, train::node_dispatch{.node_ranks = 2}, 1);
  CHECK_THROWS_WITH(
      block(c, train::data_parallel_expert_groups(1, 0, m), {0}, ledger, m, width, 5, shard::adam{}, exact),
      Catch::Contains("node_ranks") && Catch::Contains("a divisor of ep"));
}

}  // namespace train_moe_block_test
