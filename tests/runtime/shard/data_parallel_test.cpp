// ZeRO's stages on the in-process backend, with a toy model whose gradient is
// a fixed function of its parameters, so the whole trajectory is checkable:
// every scheme takes the same steps to the same bits, holds the bytes
// model/sharding.hpp predicts, sends the bytes it predicts, skips a step with a
// NaN and says where, and checkpoints that load at another rank count.
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/shard.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <vector>

using namespace trinity;

namespace {

const std::vector<std::size_t> layer_sizes{1000, 37, 5003, 2};

std::vector<float> initial_parameters() {
  const std::size_t total = std::accumulate(layer_sizes.begin(), layer_sizes.end(), std::size_t{0});
  std::vector<float> p(total);
  for (std::size_t i = 0; i < total; ++i) p[i] = std::sin(static_cast<float>(i) * 0.37f);
  return p;
}

struct run_result {
  std::vector<float> parameters;  // every layer, whole, gathered from rank 0's view
  std::vector<shard::memory_ledger> ledgers;
  std::vector<std::uint64_t> sent_per_step;  // rank 0's bytes sent in the last step
  std::vector<shard::step_report> reports;
};

// The global batch is 12 samples; rank r takes chunk r of them, so the sum over ranks is the same whatever
// the rank count (up to the order of fp32 additions). A smooth function of the parameters.
constexpr std::size_t batch = 12;
void local_gradient(std::span<const float> p, std::span<float> g, int rank, int ranks, int step) {
  const comm::partition samples(batch, ranks);
  for (std::size_t k = samples.begin(rank); k < samples.end(rank); ++k)
    for (std::size_t i = 0; i < p.size(); ++i)
      g[i] += std::cos(p[i] * 3.0f + static_cast<float>(k)) * 0.01f + 0.001f * static_cast<float>(step);
}

template <class Scheme>
run_result train(int ranks, int steps, int nan_rank = -1, int nan_step = -1,
                 const std::filesystem::path& save = {}, const std::filesystem::path& load = {}) {
  comm::thread_world world(ranks);
  run_result out;
  out.ledgers.resize(static_cast<std::size_t>(ranks));
  const auto init = initial_parameters();
  shard::adam opt{.learning_rate = 0.01f};
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    shard::data_parallel<Scheme, comm::thread_communicator> dp(c, ledger, layer_sizes, init, opt);
    const int start = load.empty() ? 0 : static_cast<int>(shard::load_checkpoint(load, dp, c));
    for (int s = 0; s < steps; ++s) {
      const std::uint64_t before = c.bytes_sent();
      // A forward pass reads every layer; the backward pass reads them again and writes gradients.
      float checksum = 0;
      for (std::size_t l = 0; l < dp.layers(); ++l) {
        dp.acquire(l);
        checksum += dp.parameters(l)[0];
        dp.release(l);
      }
      if (!std::isfinite(checksum)) throw std::logic_error("non-finite parameters");
      for (std::size_t l = dp.layers(); l-- > 0;) {
        dp.acquire(l);
        auto g = dp.gradient(l);
        local_gradient(dp.parameters(l), g, c.rank(), c.size(), start + s);
        if (c.rank() == nan_rank && s == nan_step && l == 2) g[17] = NAN;
        dp.gradient_ready(l);
        dp.release(l);
      }
      const auto report = dp.step(opt);
      if (c.rank() == 0) {
        out.sent_per_step.push_back(c.bytes_sent() - before);
        out.reports.push_back(report);
      }
    }
    if (!save.empty()) shard::save_checkpoint(save, dp, c);
    // Gather every layer for comparison (acquire is a no-op below stage 3).
    std::vector<float> all;
    for (std::size_t l = 0; l < dp.layers(); ++l) {
      dp.acquire(l);
      const auto p = dp.parameters(l);
      all.insert(all.end(), p.begin(), p.end());
      dp.release(l);
    }
    if (c.rank() == 0) out.parameters = std::move(all);
    out.ledgers[static_cast<std::size_t>(c.rank())] = ledger;  // while the model still lives
  });
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("zero's stages give DDP's parameters bit for bit, on every rank count", "[shard]") {
  for (int ranks : {1, 2, 3, 4, 7}) {
    INFO(ranks << " ranks");
    const auto ddp = train<shard::replicate>(ranks, 4);
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<1>>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<2>>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<3>>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::offload<shard::zero<2>>>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::offload<shard::replicate>>(ranks, 4).parameters));
    // And the parameters did move.
    REQUIRE_FALSE(same_bits(ddp.parameters, initial_parameters()));
  }
}

TEMPLATE_TEST_CASE("resident bytes per rank match the ZeRO formula for fp32 Adam within 1%", "[shard]",
                   shard::replicate, shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  const int ranks = 4;
  const auto r = train<TestType>(ranks, 2);
  const double psi = static_cast<double>(std::accumulate(layer_sizes.begin(), layer_sizes.end(), std::size_t{0}));
  const auto m = model::zero_memory_per_rank(psi, ranks, TestType::shards.zero_stage(), model::fp32_adam);
  for (const auto& ledger : r.ledgers) {
    using shard::state_kind;
    // After the run nothing transient is left: what stays is what the formula counts.
    CHECK(static_cast<double>(ledger.resident(state_kind::parameters)) == Approx(m.parameters.value()).epsilon(0.01));
    CHECK(static_cast<double>(ledger.resident(state_kind::gradients)) == Approx(m.gradients.value()).epsilon(0.01));
    CHECK(static_cast<double>(ledger.resident(state_kind::optimizer_states)) ==
          Approx(m.optimizer_states.value()).epsilon(0.01));
    // The peak adds at most one layer's full parameters and gradients (stage 3's gather, stage 2's staging).
    const double largest = 5003.0 * 4;
    CHECK(static_cast<double>(ledger.peak()) <= m.total().value() * 1.01 + 2 * largest + 4.0 * 5003 / ranks);
  }
}

TEST_CASE("offloaded optimizer states leave the device and live in the offload tier", "[shard]") {
  const int ranks = 4;
  const auto r = train<shard::offload<shard::zero<2>>>(ranks, 2);
  const double psi = static_cast<double>(std::accumulate(layer_sizes.begin(), layer_sizes.end(), std::size_t{0}));
  // fp32 Adam offloaded keeps its master copy beside m and v: K = 12 there (as in mixed precision).
  const auto m = model::zero_memory_per_rank(psi, ranks, 2, {4, 4, 12}, true);
  for (const auto& ledger : r.ledgers) {
    CHECK(ledger.resident(shard::state_kind::optimizer_states, shard::placement::device) == 0);
    CHECK(static_cast<double>(ledger.resident(shard::state_kind::optimizer_states, shard::placement::offload)) ==
          Approx(m.offloaded.value()).epsilon(0.01));
  }
  CHECK(static_cast<double>(r.reports.back().offload_bytes) ==
        Approx(model::offload_traffic_per_step(psi, ranks, 2, model::fp32_adam).value()).epsilon(0.01));
}

TEMPLATE_TEST_CASE("bytes sent per step match 2Ψ and 3Ψ, times (n-1)/n, within 1%", "[shard]", shard::replicate,
                   shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  for (int ranks : {2, 4, 5}) {
    const auto r = train<TestType>(ranks, 2);
    const double psi = static_cast<double>(std::accumulate(layer_sizes.begin(), layer_sizes.end(), std::size_t{0}));
    const double predicted =
        model::zero_traffic_per_step(psi, static_cast<std::size_t>(ranks), TestType::shards.zero_stage(), model::fp32_adam).value();
    INFO(ranks << " ranks: sent " << r.sent_per_step.back() << ", predicted " << predicted);
    CHECK(static_cast<double>(r.sent_per_step.back()) == Approx(predicted).epsilon(0.01));
  }
}

TEST_CASE("a NaN in one rank's gradient skips the step on every rank and names the rank", "[shard]") {
  const auto clean = train<shard::zero<3>>(3, 3);
  const auto poisoned = train<shard::zero<3>>(3, 4, /*nan_rank=*/1, /*nan_step=*/1);
  REQUIRE(poisoned.reports.size() == 4);
  CHECK_FALSE(poisoned.reports[0].skipped);
  CHECK(poisoned.reports[1].skipped);
  CHECK(poisoned.reports[1].nonfinite_ranks == std::vector<int>{1});
  for (float x : poisoned.parameters) REQUIRE(std::isfinite(x));
  // Skipping changes nothing but the gradient's step count: 4 steps with one skipped took 3 updates.
  CHECK_FALSE(poisoned.reports[2].skipped);
}

TEST_CASE("a checkpoint saved on 4 ranks loads on 2, 3 and 4 and continues with the same parameters", "[shard]") {
  const auto dir = std::filesystem::temp_directory_path() / "trinity-shard-ckpt-test";
  std::filesystem::remove_all(dir);
  const auto straight = train<shard::zero<3>>(4, 6);
  train<shard::zero<3>>(4, 3, -1, -1, dir);
  // Same rank count: the same bits.
  REQUIRE(same_bits(straight.parameters, train<shard::zero<3>>(4, 3, -1, -1, {}, dir).parameters));
  // Another rank count, another scheme: the same model, to fp32 rounding of a differently ordered sum.
  for (int ranks : {2, 3}) {
    const auto resumed = train<shard::zero<2>>(ranks, 3, -1, -1, {}, dir);
    REQUIRE(resumed.parameters.size() == straight.parameters.size());
    double worst = 0;
    for (std::size_t i = 0; i < resumed.parameters.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(resumed.parameters[i] - straight.parameters[i])));
    INFO(ranks << " ranks: largest difference " << worst);
    CHECK(worst < 1e-5);
  }
  // A damaged file is refused by name.
  const auto f = dir / "rank-2-of-4.ckpt";
  std::filesystem::resize_file(f, std::filesystem::file_size(f) - 3);
  REQUIRE_THROWS_WITH(train<shard::zero<3>>(4, 1, -1, -1, {}, dir), Catch::Contains("rank-2-of-4.ckpt"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the tracking allocator books a vector's bytes and gives them back", "[shard]") {
  shard::memory_ledger ledger;
  {
    shard::tracked_vector<float> v(1000, 0.0f, shard::tracking_allocator<float>(ledger, shard::state_kind::gradients));
    CHECK(ledger.resident(shard::state_kind::gradients) == 4000);
    v.resize(3000);
    CHECK(ledger.resident(shard::state_kind::gradients) >= 12000);
  }
  CHECK(ledger.resident(shard::state_kind::gradients) == 0);
  CHECK(ledger.peak(shard::state_kind::gradients) >= 16000);  // old and new buffers lived together while growing
  CHECK(ledger.resident() == 0);
}
