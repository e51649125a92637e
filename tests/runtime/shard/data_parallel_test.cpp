// ZeRO's stages on the in-process backend, with a toy model whose gradient is
// a fixed function of its parameters, so the whole trajectory is checkable:
// every scheme takes the same steps to the same bits, holds the bytes
// model/sharding.hpp predicts, sends the bytes it predicts, skips a step with a
// NaN and says where, and checkpoints that load at another rank count.
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/half.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/shard.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "../comm/forwarding_communicator.hpp"

namespace shard_data_parallel_test {

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

// Plain SGD: the optimizer interface with no state at all (states_per_parameter = 0).
struct sgd {
  float learning_rate = 0.001f;
  static constexpr std::size_t states_per_parameter = 0;
  void update(std::span<float> params, std::span<const float> grads, std::span<float> states, long) const {
    if (!states.empty()) throw std::logic_error("SGD keeps no state");
    for (std::size_t i = 0; i < params.size(); ++i) params[i] -= learning_rate * grads[i];
  }
};

// Every layer whole, as this rank sees it (acquire gathers under stage 3 and is a no-op below).
template <class DP>
std::vector<float> all_parameters(DP& dp) {
  std::vector<float> all;
  for (std::size_t l = 0; l < dp.layers(); ++l) {
    dp.acquire(l);
    const auto p = dp.parameters(l);
    all.insert(all.end(), p.begin(), p.end());
    dp.release(l);
  }
  return all;
}

template <class Scheme, class Optimizer = shard::adam>
run_result train(int ranks, int steps, int nan_rank = -1, int nan_step = -1, const std::filesystem::path& save = {},
                 const std::filesystem::path& load = {}, bool mark_ready = true, shard::schedule when = {}) {
  comm::thread_world world(ranks);
  run_result out;
  out.ledgers.resize(static_cast<std::size_t>(ranks));
  const auto init = initial_parameters();
  Optimizer opt{};
  opt.learning_rate = 0.01f;
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    shard::data_parallel<Scheme, comm::thread_communicator> dp(c, ledger, layer_sizes, init, opt, {}, {}, when);
    const int start = load.empty() ? 0 : static_cast<int>(shard::load_checkpoint(load, dp, c));
    for (int s = 0; s < steps; ++s) {
      const std::uint64_t before = c.bytes_sent();
      // A forward pass reads every layer; the backward pass reads them again and writes gradients.
      float checksum = 0;
      for (std::size_t l = 0; l < dp.layers(); ++l) {
        dp.acquire(l);
        if (l + 1 < dp.layers()) dp.prefetch(l + 1);  // FSDP's forward prefetch; with overlap it gathers now
        checksum += dp.parameters(l)[0];
        dp.release(l);
      }
      if (!std::isfinite(checksum)) throw std::logic_error("non-finite parameters");
      for (std::size_t l = dp.layers(); l-- > 0;) {
        dp.acquire(l);
        if (l > 0) dp.prefetch(l - 1);  // and the backward's
        auto g = dp.gradient(l);
        local_gradient(dp.parameters(l), g, c.rank(), c.size(), start + s);
        if (c.rank() == nan_rank && s == nan_step && l == 2) g[17] = NAN;
        if (mark_ready) dp.gradient_ready(l);
        dp.release(l);
      }
      const auto report = dp.step(opt);
      if (c.rank() == 0) {
        out.sent_per_step.push_back(c.bytes_sent() - before);
        out.reports.push_back(report);
      }
    }
    if (!save.empty()) shard::save_checkpoint(save, dp, c);
    auto all = all_parameters(dp);
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

TEST_CASE("a loop that never calls gradient_ready trains the same model under every stage", "[shard]") {
  // ZeRO 2 and 3 used to update with zero gradients, silently, where replicate and ZeRO 1 trained.
  for (int ranks : {1, 3}) {
    INFO(ranks << " ranks");
    const auto ddp = train<shard::replicate>(ranks, 3);
    REQUIRE(same_bits(ddp.parameters, train<shard::replicate>(ranks, 3, -1, -1, {}, {}, false).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<1>>(ranks, 3, -1, -1, {}, {}, false).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<2>>(ranks, 3, -1, -1, {}, {}, false).parameters));
    REQUIRE(same_bits(ddp.parameters, train<shard::zero<3>>(ranks, 3, -1, -1, {}, {}, false).parameters));
  }
  // Without gradient_ready the NaN check still runs: the step is skipped and the rank named.
  const auto r = train<shard::zero<2>>(2, 2, 1, 0, {}, {}, false);
  REQUIRE(r.reports.at(0).skipped);
  REQUIRE(r.reports.at(0).nonfinite_ranks == std::vector<int>{1});
}

TEST_CASE("gradient_ready twice in one step is refused: it would reduce an empty buffer over the sum", "[shard]") {
  comm::thread_world world(2);
  std::vector<std::string> refusals(2);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    shard::adam opt{.learning_rate = 0.01f};
    shard::data_parallel<shard::zero<2>, comm::thread_communicator> dp(c, ledger, {8}, std::vector<float>(8, 1.0f),
                                                                       opt);
    dp.gradient(0)[0] = 1.0f;
    dp.gradient_ready(0);
    try {
      dp.gradient_ready(0);
    } catch (const invalid_input& e) {
      refusals[static_cast<std::size_t>(c.rank())] = e.what();
    }
    dp.step(opt);
    dp.gradient_ready(0);  // a new step: allowed again
    dp.step(opt);
  });
  for (const auto& r : refusals) REQUIRE_THAT(r, Catch::Contains("gradient_ready(0) was called twice in one step"));
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
    const double predicted = model::zero_traffic_per_step(psi, static_cast<std::size_t>(ranks),
                                                          TestType::shards.zero_stage(), model::fp32_adam)
                                 .value();
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

TEST_CASE("a data_parallel skips a step another part of its model votes to skip, and says what it saw", "[shard]") {
  // What each rank saw, kept for the checks after the threads (Catch2's assertions are not thread-safe).
  struct seen {
    bool saw_before_veto = true, saw_nan = false, saw_after_skip = true;
    shard::step_report vetoed, nan, stepped;
    long steps_after_skips = -1, steps_at_end = -1;
    std::vector<float> after_skips, at_end;
  };
  const std::vector<std::size_t> sizes{7, 5};
  std::vector<float> init(12);
  std::iota(init.begin(), init.end(), 1.0f);
  comm::thread_world world(3);
  std::vector<seen> ranks(3);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    auto& me = ranks[static_cast<std::size_t>(c.rank())];
    shard::memory_ledger ledger;
    const shard::adam opt{};
    shard::data_parallel<shard::zero<2>, comm::thread_communicator> dp(c, ledger, sizes, init, opt);
    const auto backward = [&](bool nan) {
      for (std::size_t l = dp.layers(); l-- > 0;) {
        dp.acquire(l);
        auto g = dp.gradient(l);
        std::fill(g.begin(), g.end(), 0.5f);
        if (nan && l == 1) g[3] = NAN;
        dp.gradient_ready(l);
        dp.release(l);
      }
    };
    backward(false);  // finite everywhere, but another part of the model saw NaN
    me.saw_before_veto = dp.saw_nonfinite();
    me.vetoed = dp.step(opt, true);
    backward(c.rank() == 1);  // rank 1's own NaN
    me.saw_nan = dp.saw_nonfinite();
    me.nan = dp.step(opt, false);
    me.saw_after_skip = dp.saw_nonfinite();
    me.steps_after_skips = dp.steps_taken();
    me.after_skips = all_parameters(dp);
    backward(false);
    me.stepped = dp.step(opt, false);
    me.steps_at_end = dp.steps_taken();
    me.at_end = all_parameters(dp);
  });
  for (int r = 0; r < 3; ++r) {
    const auto& me = ranks[static_cast<std::size_t>(r)];
    INFO("rank " << r);
    CHECK_FALSE(me.saw_before_veto);
    CHECK(me.vetoed.skipped);
    CHECK(me.vetoed.nonfinite_ranks.empty());  // this data_parallel's ranks saw nothing
    CHECK(me.saw_nan == (r == 1));
    CHECK(me.nan.skipped);
    CHECK(me.nan.nonfinite_ranks == std::vector<int>{1});
    CHECK_FALSE(me.saw_after_skip);
    // Two skipped steps left the parameters and the step count alone; the next one moved every value.
    CHECK(me.steps_after_skips == 0);
    CHECK(me.after_skips == init);
    CHECK_FALSE(me.stepped.skipped);
    CHECK(me.steps_at_end == 1);
    REQUIRE(me.at_end.size() == init.size());
    for (std::size_t i = 0; i < init.size(); ++i) CHECK(me.at_end[i] < init[i]);
  }
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

TEST_CASE("a checkpoint reader cuts any partition's chunk of a layer from the files that hold it", "[shard]") {
  const auto dir = std::filesystem::temp_directory_path() / "trinity-shard-reader-test";
  std::filesystem::remove_all(dir);
  const auto saved = train<shard::zero<3>>(4, 3, -1, -1, dir);
  const shard::checkpoint_reader in(dir);
  CHECK(in.ranks() == 4);
  CHECK(in.steps() == 3);
  CHECK(in.states_per() == 2);  // Adam's two moments
  REQUIRE(in.layers() == layer_sizes.size());
  for (std::size_t l = 0; l < layer_sizes.size(); ++l) CHECK(in.layer_size(l) == layer_sizes[l]);
  // Layer 2 (5,003 values over 4 files) whole, and cut 3 ways: each chunk is the saved run's own values there.
  const std::size_t first = layer_sizes[0] + layer_sizes[1], n = layer_sizes[2];
  for (int parts : {1, 3}) {
    const comm::partition part(n, parts);
    for (int r = 0; r < parts; ++r) {
      std::vector<float> params(part.size(r)), states(2 * part.size(r));
      in.chunk(2, part, r, params, states);
      const auto begin = saved.parameters.begin() + static_cast<std::ptrdiff_t>(first + part.begin(r));
      CHECK(std::equal(params.begin(), params.end(), begin));
      // The second moment of a trained value is a mean of squares: positive wherever a gradient was.
      CHECK(std::all_of(states.begin() + static_cast<std::ptrdiff_t>(part.size(r)), states.end(),
                        [](float v) { return v > 0; }));
    }
  }
  // A partition of another count does not cut this layer, and says so.
  std::vector<float> params(10), states(20);
  CHECK_THROWS_WITH(in.chunk(2, comm::partition(10, 1), 0, params, states), Catch::Contains("layer 2 holds 5003"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_layers restores a model whose layers another layout saved, each from the reader that holds it",
          "[shard]") {
  const auto dir = std::filesystem::temp_directory_path() / "trinity-shard-layers-test";
  std::filesystem::remove_all(dir);
  const auto saved = train<shard::zero<3>>(4, 3, -1, -1, dir / "three");
  train<shard::zero<3>>(2, 2, -1, -1, dir / "two");
  const shard::checkpoint_reader three(dir / "three"), two(dir / "two");
  // A data_parallel of 3 ranks holding the saved layers 2 and 0, in that order (a pipeline rank's chunks).
  const std::vector<std::size_t> mine{layer_sizes[2], layer_sizes[0]}, from{2, 0};
  std::vector<float> init(layer_sizes[2] + layer_sizes[0], 0.0f);
  comm::thread_world world(3);
  std::vector<std::vector<float>> chunks(3), from_values(3), states(3), states_from_values(3);
  std::vector<std::string> refusals(3);
  std::vector<long> steps(3), steps_from_values(3);
  const auto load_with = [&](auto& dp, int rank, const shard::checkpoint_reader& second, std::size_t second_at) {
    return shard::load_layers(dp, rank, [&](std::size_t l) {
      return l == 0 ? std::pair{&three, from[0]} : std::pair{&second, second_at};
    });
  };
  const auto owned = [](const auto& dp, std::vector<float>& params, std::vector<float>& st) {
    for (std::size_t l = 0; l < dp.layers(); ++l) {
      const auto ch = dp.owned_chunk(l);
      params.insert(params.end(), ch.parameters.begin(), ch.parameters.end());
      st.insert(st.end(), ch.states.begin(), ch.states.end());
    }
  };
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    shard::data_parallel<shard::zero<1>, comm::thread_communicator> dp(c, ledger, mine, init, shard::adam{});
    const auto r = static_cast<std::size_t>(c.rank());
    steps[r] = load_with(dp, c.rank(), three, from[1]);
    owned(dp, chunks[r], states[r]);
    // The same layers handed over whole (layer_values, as a caller that rearranged them would) load alike.
    shard::data_parallel<shard::zero<1>, comm::thread_communicator> whole(c, ledger, mine, init, shard::adam{});
    steps_from_values[r] = shard::load_layers(whole, c.rank(), [&](std::size_t l) { return three.values(from[l]); });
    owned(whole, from_values[r], states_from_values[r]);
    // Another run's layer beside these, or a layer of another size, is refused by name.
    try {
      load_with(dp, c.rank(), two, 0);
    } catch (const invalid_input& e) {
      refusals[r] = e.what();
    }
    try {
      load_with(dp, c.rank(), three, 1);
    } catch (const invalid_input& e) {
      refusals[r] += std::string(" | ") + e.what();
    }
  });
  for (int r = 0; r < 3; ++r) {
    CHECK(steps[static_cast<std::size_t>(r)] == 3);
    // Rank r's chunk of each layer is the saved run's values there: layer 2 first, then layer 0.
    std::vector<float> expected;
    const std::size_t offset[] = {layer_sizes[0] + layer_sizes[1], 0};
    for (std::size_t l = 0; l < 2; ++l) {
      const comm::partition part(mine[l], 3);
      const auto begin = saved.parameters.begin() + static_cast<std::ptrdiff_t>(offset[l] + part.begin(r));
      expected.insert(expected.end(), begin, begin + static_cast<std::ptrdiff_t>(part.size(r)));
    }
    CHECK(same_bits(chunks[static_cast<std::size_t>(r)], expected));
    CHECK(steps_from_values[static_cast<std::size_t>(r)] == 3);
    CHECK(same_bits(from_values[static_cast<std::size_t>(r)], expected));
    CHECK(same_bits(states_from_values[static_cast<std::size_t>(r)], states[static_cast<std::size_t>(r)]));
    CHECK_THAT(refusals[static_cast<std::size_t>(r)],
               Catch::Contains("taken 3 and 2 steps") && Catch::Contains("checkpoint.layer_sizes[1]: 37 values"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a stateless optimizer trains, checkpoints and resumes on another rank count", "[shard]") {
  const auto dir = std::filesystem::temp_directory_path() / "trinity-shard-sgd-ckpt-test";
  std::filesystem::remove_all(dir);
  const auto straight = train<shard::zero<3>, sgd>(4, 6);
  // SGD moved the parameters (a wrong update would leave them), and every stage takes the same steps.
  CHECK_FALSE(same_bits(straight.parameters, initial_parameters()));
  CHECK(same_bits(straight.parameters, train<shard::replicate, sgd>(4, 6).parameters));
  train<shard::zero<3>, sgd>(4, 3, -1, -1, dir);  // divided by zero states per parameter before
  CHECK(same_bits(straight.parameters, train<shard::zero<3>, sgd>(4, 3, -1, -1, {}, dir).parameters));
  const auto resumed = train<shard::zero<1>, sgd>(3, 3, -1, -1, {}, dir);
  REQUIRE(resumed.parameters.size() == straight.parameters.size());
  for (std::size_t i = 0; i < resumed.parameters.size(); ++i)
    REQUIRE(std::abs(resumed.parameters[i] - straight.parameters[i]) < 1e-5f);
  // An Adam model refuses SGD's checkpoint: it has no states to load.
  CHECK_THROWS_WITH(train<shard::zero<3>>(4, 1, -1, -1, {}, dir), Catch::Contains("state values"));
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

namespace {
// A communicator with collectives of its own, as MPI's shared-memory window or an NCCL binding has: it counts
// the calls and does the ring underneath.
struct counting_communicator : test::forwarding_communicator {
  static constexpr std::string_view name = "counting";
  std::atomic<int>* all_reduces;
  std::atomic<int>* reduce_scatters;
  std::atomic<int>* all_gathers;

  template <class T>
  void all_reduce(std::span<T> data, comm::reduce_op op) {
    all_reduces->fetch_add(1);
    comm::ring::all_reduce(*this, data, op);
  }
  template <class T>
  void reduce_scatter(std::span<const T> in, std::span<T> out, comm::reduce_op op) {
    reduce_scatters->fetch_add(1);
    comm::ring::reduce_scatter(*this, in, out, op);
  }
  template <class T>
  void all_gather(std::span<const T> in, std::span<T> out) {
    all_gathers->fetch_add(1);
    comm::ring::all_gather(*this, in, out);
  }
};

template <class Scheme>
std::array<int, 3> collectives_called(int ranks) {
  std::atomic<int> ar{0}, rs{0}, ag{0};
  comm::thread_world world(ranks);
  comm::run_ranks(world, [&](comm::thread_communicator& inner) {
    counting_communicator c{{&inner}, &ar, &rs, &ag};
    shard::memory_ledger ledger;
    shard::adam opt{.learning_rate = 0.01f};
    shard::data_parallel<Scheme, counting_communicator> dp(c, ledger, {64, 30}, std::vector<float>(94, 0.5f), opt);
    for (std::size_t l = dp.layers(); l-- > 0;) {
      dp.acquire(l);
      for (auto& g : dp.gradient(l)) g = 0.25f;
      dp.gradient_ready(l);
      dp.release(l);
    }
    dp.step(opt);
  });
  return {ar.load(), rs.load(), ag.load()};
}
}  // namespace

TEST_CASE("data_parallel runs every collective through the communicator's own, where it has one", "[shard]") {
  // Before, algorithm::ring was hard-coded and such a communicator's collectives were never called.
  const auto ddp = collectives_called<shard::replicate>(3);
  CHECK(ddp[0] == 3 * 3);  // per rank: two layers' gradients and the NaN flags
  const auto z1 = collectives_called<shard::zero<1>>(3);
  CHECK(z1[1] == 3 * 2);  // the gradients reduce-scattered
  CHECK(z1[2] == 3 * 2);  // the updated shards gathered
  const auto z3 = collectives_called<shard::zero<3>>(3);
  CHECK(z3[1] == 3 * 2);
  CHECK(z3[2] == 3 * 2);  // acquire gathers each layer
  CHECK(z3[0] == 3);      // the NaN flags
}

namespace {
struct mixed_result {
  std::vector<float> parameters;  // rank 0's view of every layer, widened
  shard::memory_ledger ledger;    // rank 0's, while the model lived
  std::uint64_t sent_last_step = 0;
  std::size_t device_used = 0, offload_used = 0;  // the tiers' own count, rank 0's, while the model lived
};

// The same toy loop at a working precision W: the gradient is computed in fp32 from the W parameters and
// accumulated into the W gradient buffer, as a bf16 backward pass does. Each rank's storage comes from two
// tier_resources, the device's and the offload tier's.
template <class Scheme, class W>
mixed_result train_at(int ranks, int steps) {
  comm::thread_world world(ranks);
  mixed_result out;
  const auto init = initial_parameters();
  shard::adam opt{.learning_rate = 0.01f};
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    place::tier_resource device("hbm", bytes{1 << 20}), host("ddr", bytes{1 << 20});
    shard::memory_ledger ledger;
    shard::data_parallel<Scheme, comm::thread_communicator, shard::exact_reduction, W> dp(
        c, ledger, layer_sizes, init, opt, {}, shard::storage{&device, &host});
    std::vector<float> p32, g32;
    for (int s = 0; s < steps; ++s) {
      const std::uint64_t before = c.bytes_sent();
      for (std::size_t l = 0; l < dp.layers(); ++l) {  // the forward pass: stage 3 gathers each layer
        dp.acquire(l);
        if (!std::isfinite(static_cast<float>(dp.parameters(l)[0]))) throw std::logic_error("non-finite");
        dp.release(l);
      }
      for (std::size_t l = dp.layers(); l-- > 0;) {
        dp.acquire(l);
        const auto p = dp.parameters(l);
        p32.assign(p.size(), 0.0f);
        for (std::size_t i = 0; i < p.size(); ++i) p32[i] = static_cast<float>(p[i]);
        g32.assign(p.size(), 0.0f);
        local_gradient(p32, g32, c.rank(), c.size(), s);
        auto g = dp.gradient(l);
        for (std::size_t i = 0; i < g.size(); ++i) g[i] = W(g32[i]);
        dp.gradient_ready(l);
        dp.release(l);
      }
      dp.step(opt);
      if (c.rank() == 0) out.sent_last_step = c.bytes_sent() - before;
    }
    std::vector<float> all;
    for (std::size_t l = 0; l < dp.layers(); ++l) {
      dp.acquire(l);
      for (const auto x : dp.parameters(l)) all.push_back(static_cast<float>(x));
      dp.release(l);
    }
    if (c.rank() == 0) {
      out.parameters = std::move(all);
      out.ledger = ledger;
      out.device_used = device.used();
      out.offload_used = host.used();
    }
  });
  return out;
}
}  // namespace

TEST_CASE("bf16 and fp16 parameters with fp32 master states: every stage the same bits, near fp32", "[shard]") {
  for (int ranks : {1, 3, 4}) {
    INFO(ranks << " ranks");
    const auto ddp = train_at<shard::replicate, bfloat16>(ranks, 4);
    REQUIRE(same_bits(ddp.parameters, train_at<shard::zero<1>, bfloat16>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train_at<shard::zero<2>, bfloat16>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train_at<shard::zero<3>, bfloat16>(ranks, 4).parameters));
    REQUIRE(same_bits(ddp.parameters, train_at<shard::offload<shard::zero<2>>, bfloat16>(ranks, 4).parameters));
    // Adam moves each parameter by about lr a step whatever its gradient's size, so where a gradient is near
    // zero, 16-bit rounding can flip a step: a parameter may differ from fp32's by a few lr plus its own
    // rounding, never more, and on average the 16-bit runs follow fp32 closely while moving far.
    const auto fp32 = train_at<shard::replicate, float>(ranks, 4);
    const auto init = initial_parameters();
    const auto compare = [&](const std::vector<float>& p, float resolution) {
      double off = 0, moved = 0;
      for (std::size_t i = 0; i < init.size(); ++i) {
        const float d = std::abs(p[i] - fp32.parameters[i]);
        REQUIRE(d <= 2 * 4 * 0.01f + std::abs(fp32.parameters[i]) * resolution);
        off += d;
        moved += std::abs(fp32.parameters[i] - init[i]);
      }
      CHECK(moved / static_cast<double>(init.size()) > 0.02);  // about 3 lr of 4 steps
      CHECK(off < moved * 0.1);
    };
    compare(ddp.parameters, 1.0f / 128);
    compare(train_at<shard::zero<3>, float16>(ranks, 4).parameters, 1.0f / 1024);
  }
}

TEMPLATE_TEST_CASE("mixed precision holds and sends the planner's 2 + 2 + 12 bytes per parameter", "[shard]",
                   shard::replicate, shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  const int ranks = 4;
  const auto r = train_at<TestType, bfloat16>(ranks, 2);
  const double psi = static_cast<double>(std::accumulate(layer_sizes.begin(), layer_sizes.end(), std::size_t{0}));
  const int stage = TestType::shards.zero_stage();
  const auto m = model::zero_memory_per_rank(psi, ranks, stage, model::mixed_precision_adam);
  using shard::state_kind;
  CHECK(static_cast<double>(r.ledger.resident(state_kind::parameters)) == Approx(m.parameters.value()).epsilon(0.01));
  CHECK(static_cast<double>(r.ledger.resident(state_kind::gradients)) == Approx(m.gradients.value()).epsilon(0.01));
  CHECK(static_cast<double>(r.ledger.resident(state_kind::optimizer_states)) ==
        Approx(m.optimizer_states.value()).epsilon(0.01));
  const double predicted = model::zero_traffic_per_step(psi, ranks, stage, model::mixed_precision_adam).value();
  CHECK(static_cast<double>(r.sent_last_step) == Approx(predicted).epsilon(0.01));
}

TEST_CASE("data_parallel's states live in the memory resources it is given: offload fills the offload tier",
          "[shard]") {
  const auto plain = train_at<shard::zero<2>, float>(2, 1);
  // Everything on the device tier, and the tier's own count is the ledger's.
  CHECK(plain.device_used == plain.ledger.resident(shard::placement::device));
  CHECK(plain.offload_used == 0);
  const auto off = train_at<shard::offload<shard::zero<2>>, bfloat16>(2, 1);
  CHECK(off.device_used == off.ledger.resident(shard::placement::device));
  CHECK(off.offload_used == off.ledger.resident(shard::placement::offload));
  CHECK(off.offload_used > 0);
  CHECK(off.ledger.resident(shard::state_kind::optimizer_states, shard::placement::device) == 0);

  // A device tier too small for the model refuses it by name instead of overcommitting.
  comm::thread_world world(1);
  std::string refusal;
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    place::tier_resource tiny("hbm", bytes{4096});
    shard::memory_ledger ledger;
    shard::adam opt{};
    try {
      shard::data_parallel<shard::zero<1>, comm::thread_communicator> dp(c, ledger, layer_sizes, initial_parameters(),
                                                                         opt, {}, shard::storage{&tiny, &tiny});
    } catch (const place::capacity_exceeded& e) {
      refusal = e.what();
    }
    CHECK(tiny.used() == 0);  // nothing leaked on the way out
  });
  CHECK_THAT(refusal, Catch::Contains("tier hbm has"));
}

TEST_CASE("with overlap every stage trains the same bits and holds the same bytes, whatever the bucket",
          "[shard][async]") {
  for (int ranks : {1, 3, 4}) {
    for (std::size_t bucket : {std::size_t{1}, std::size_t{8000}, std::size_t{25} << 20}) {
      INFO(ranks << " ranks, buckets of " << bucket << " bytes");
      const shard::schedule overlap{.overlap = true, .bucket_bytes = bucket};
      const auto ddp = train<shard::replicate>(ranks, 3);
      const auto check = [&](const run_result& plain, const run_result& overlapped) {
        REQUIRE(same_bits(ddp.parameters, overlapped.parameters));
        for (std::size_t r = 0; r < plain.ledgers.size(); ++r)
          CHECK(plain.ledgers[r].resident() == overlapped.ledgers[r].resident());
        CHECK(plain.sent_per_step == overlapped.sent_per_step);
      };
      check(ddp, train<shard::replicate>(ranks, 3, -1, -1, {}, {}, true, overlap));
      check(train<shard::zero<1>>(ranks, 3), train<shard::zero<1>>(ranks, 3, -1, -1, {}, {}, true, overlap));
      check(train<shard::zero<2>>(ranks, 3), train<shard::zero<2>>(ranks, 3, -1, -1, {}, {}, true, overlap));
      check(train<shard::zero<3>>(ranks, 3), train<shard::zero<3>>(ranks, 3, -1, -1, {}, {}, true, overlap));
      check(train<shard::zero<3>>(ranks, 3), train<shard::zero<3>>(ranks, 3, -1, -1, {}, {}, false, overlap));
    }
  }
  // A NaN is still found and named with the reductions in flight.
  const auto r = train<shard::zero<2>>(2, 2, 1, 0, {}, {}, true, {.overlap = true, .bucket_bytes = 1});
  REQUIRE(r.reports.at(0).skipped);
  REQUIRE(r.reports.at(0).nonfinite_ranks == std::vector<int>{1});
}

namespace {
// Holds its first reduce-scatter until the caller has gone on to the next layer's backward (or 10 s pass),
// and notes the thread each collective ran on.
struct holds_first_reduction : test::forwarding_communicator {
  static constexpr std::string_view name = "holds-first-reduction";
  std::atomic<bool>* next_layer_started;
  std::atomic<int>* timed_out;
  std::atomic<int>* on_caller_thread;
  std::thread::id caller;
  int reductions = 0;
  template <class T>
  void reduce_scatter(std::span<const T> in, std::span<T> out, comm::reduce_op op) {
    if (std::this_thread::get_id() == caller) on_caller_thread->fetch_add(1);
    if (reductions++ == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!next_layer_started->load())
        if (std::chrono::steady_clock::now() > give_up) {
          timed_out->fetch_add(1);
          break;
        } else {
          std::this_thread::yield();
        }
    }
    comm::ring::reduce_scatter(*this, in, out, op);
  }
};
}  // namespace

TEST_CASE("with overlap a layer's gradient is reduced while the next layer's backward runs", "[shard][async]") {
  std::atomic<int> timed_out{0}, on_caller{0};
  comm::thread_world world(2);
  comm::run_ranks(world, [&](comm::thread_communicator& inner) {
    std::atomic<bool> next_started{false};
    holds_first_reduction c{{&inner}, &next_started, &timed_out, &on_caller, std::this_thread::get_id()};
    shard::memory_ledger ledger;
    shard::adam opt{.learning_rate = 0.01f};
    shard::data_parallel<shard::zero<2>, holds_first_reduction> dp(c, ledger, {64, 30}, std::vector<float>(94, 0.5f),
                                                                   opt, {}, {}, {.overlap = true, .bucket_bytes = 1});
    for (auto& g : dp.gradient(1)) g = 0.25f;
    dp.gradient_ready(1);  // layer 1's bucket starts and is held until layer 0's backward begins
    next_started = true;
    for (auto& g : dp.gradient(0)) g = 0.5f;
    dp.gradient_ready(0);
    dp.step(opt);
    dp.acquire(0);
    CHECK(dp.parameters(0)[0] < 0.5f);  // a real step was taken with the reduced gradient
    dp.release(0);
  });
  CHECK(timed_out.load() == 0);
  CHECK(on_caller.load() == 0);  // every reduction ran on the engine's thread
}

}  // namespace shard_data_parallel_test
