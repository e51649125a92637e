// Built against an installed trinity by run.cmake, as a training framework or an inference server adopts it:
// each API item below is used the way such a program would, and checked. Exits 0 only when all hold.
#include <trinity/backends/sim/communicator.hpp>
#include <trinity/cache.hpp>  // brings the literals its documented examples use
#include <trinity/comm.hpp>
#include <trinity/io.hpp>
#include <trinity/place.hpp>  // and so does this
#include <trinity/plan.hpp>
#include <trinity/shard.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <vector>

#include "expect.hpp"

using namespace trinity;
using namespace trinity::literals;

namespace {

// The framework's own communicator: its collectives (an NCCL call, in a real one) are what ZeRO must use.
struct framework_comm {
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "framework";
  comm::thread_communicator* inner;
  std::atomic<int>* calls;
  [[nodiscard]] int rank() const { return inner->rank(); }
  [[nodiscard]] int size() const { return inner->size(); }
  [[nodiscard]] std::uint64_t bytes_sent() const { return inner->bytes_sent(); }
  void send(std::span<const std::byte> out, int dest) { inner->send(out, dest); }
  void recv(std::span<std::byte> in, int source) { inner->recv(in, source); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    inner->sendrecv(out, dest, in, source);
  }
  template <class T>
  void all_reduce(std::span<T> d, comm::reduce_op op) {
    ++*calls;
    comm::ring::all_reduce(*this, d, op);
  }
  template <class T>
  void reduce_scatter(std::span<const T> in, std::span<T> out, comm::reduce_op op) {
    ++*calls;
    comm::ring::reduce_scatter(*this, in, out, op);
  }
  template <class T>
  void all_gather(std::span<const T> in, std::span<T> out) {
    ++*calls;
    comm::ring::all_gather(*this, in, out);
  }
};

// ZeRO-3 in bf16 with fp32 master states offloaded into a host tier, on the framework's communicator, with
// gradients reduced while the next layer's backward runs and the next layer's parameters gathered ahead.
void zero3_bf16_offloaded_overlapped() {
  const std::vector<std::size_t> layers{4096, 1000};
  std::atomic<int> calls{0};
  std::atomic<int> moved{0}, in_tiers{0};
  comm::thread_world world(2);
  comm::run_ranks(world, [&](comm::thread_communicator& inner) {
    framework_comm c{&inner, &calls};
    place::tier_resource hbm("hbm", 1_MB), ddr("ddr", 1_MB);
    shard::memory_ledger ledger;
    shard::adam adam{.learning_rate = 0.01f};
    shard::data_parallel<shard::offload<shard::zero<3>>, framework_comm, shard::exact_reduction, bfloat16> dp(
        c, ledger, layers, std::vector<float>(5096, 1.0f), adam, {}, shard::storage{&hbm, &ddr},
        shard::schedule{.overlap = true, .bucket_bytes = 4096});
    for (int step = 0; step < 3; ++step) {
      for (std::size_t l = layers.size(); l-- > 0;) {
        dp.acquire(l);
        if (l > 0) dp.prefetch(l - 1);
        for (auto& g : dp.gradient(l)) g = bfloat16(0.5f);  // every parameter wants to go down
        dp.gradient_ready(l);
        dp.release(l);
      }
      dp.step(adam);
    }
    dp.acquire(0);
    if (static_cast<float>(dp.parameters(0)[0]) < 0.99f) ++moved;
    dp.release(0);
    if (hbm.used() == ledger.resident(shard::placement::device) && ddr.used() > 0 &&
        ddr.used() == ledger.resident(shard::placement::offload))
      ++in_tiers;
  });
  EXPECT(calls.load() > 0, "data_parallel calls the communicator's own collectives");
  EXPECT(moved.load() == 2, "bf16 ZeRO-3 with fp32 master states trains");
  EXPECT(in_tiers.load() == 2, "its states live in the tiers given, offloaded ones in the host tier");
}

// A rack of the user's own, from JSON: the planner's collectives simulated on it, and a communicator on it.
void own_topology() {
  const auto rack = io::read_topology(io::parse(R"({
    "nodes": [{"name": "g0", "kind": "accelerator"}, {"name": "g1", "kind": "accelerator"},
              {"name": "sw", "kind": "switch", "family": "pcie"}],
    "links": [{"a": "g0", "b": "sw", "link": "pcie5-x16"}, {"a": "g1", "b": "sw", "link": "pcie5-x16"}]})",
                                                "rack.json"));
  auto s = plan::presets::h100_infiniband();
  s.device.count = 2;
  const auto w = plan::presets::llm_7b();
  const auto r = plan::plan_training(s, w, plan::default_codecs_for(s));
  const auto sim = plan::simulate(s, w, r, plan::bind(rack, w.ranks(s), {}, "rack"));
  // The plan is priced at what NCCL moves over the system's 400 Gb/s port (47 GB/s); the rack's PCIe 5 x16 links
  // carry 64 GB/s.
  EXPECT(!sim.empty() && std::abs(sim.front().ratio() - 47.0 / 64.0) < 0.01,
         "plan::simulate runs on a user's fabric::topology");
  comm::thread_world world(2);
  std::atomic<int> exact{0};
  comm::run_ranks(world, [&](comm::thread_communicator& t) {
    const std::vector<std::uint32_t> at{0, 1};
    sim::communicator c(world, t.rank(), rack, at);
    std::vector<float> v(1 << 16, 1.0f);
    comm::all_reduce(c, std::span<float>(v), comm::reduce_op::sum, comm::algorithm::ring);
    const double alpha = rack.idle_latency(0, 1).value(), beta = 64e9;
    const double want = 2 * alpha + static_cast<double>(v.size() * sizeof(float)) / beta;  // n = 2: 2α + S/B
    if (v[0] == 2.0f && std::abs(c.now().value() - want) < 0.01 * want) ++exact;
  });
  EXPECT(exact.load() == 2, "a sim::communicator on the topology costs messages by its route");
}

// A paged KV allocator driven by the prefix cache's block table, as vLLM's block manager is.
void paged_kv() {
  cache::prefix_cache kv({.block_tokens = 4, .block_size = 64_kB, .capacity = 1_MB});
  const std::vector<cache::token> a{1, 2, 3, 4, 5, 6, 7, 8}, b{1, 2, 3, 4, 9, 9, 9, 9};
  const auto ha = kv.insert(7, a);
  const auto hb = kv.insert(7, b);
  const auto ta = ha.block_table(), tb = hb.block_table();
  EXPECT(ta.size() == 2 && tb.size() == 2 && ta[0] == tb[0] && ta[1] != tb[1] && hb.created() == 1,
         "a shared prefix shares its physical block; the new block is named");
}

}  // namespace

int main() {
  std::printf("trinity adoption API from an install:\n");
  zero3_bf16_offloaded_overlapped();
  own_topology();
  paged_kv();
  const bytes pool = 256_GB;  // the literals came with <trinity/place.hpp>
  EXPECT(pool.value() == 256e9, "the literals arrive with place.hpp and cache.hpp");
  return consumer::verdict();
}
