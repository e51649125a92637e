// trinity-bench-place: placement solvers and the tiered store.
//
//   build/bin/trinity-bench-place --benchmark_format=json
//
// place/greedy/<n>       greedy + local search (no bound) on n objects x 4 tiers; target (issue 5): 10,000 in < 50 ms
// place/greedy_bound/<n> the same with the Lagrangian bound on its gap; counter gap
// place/exact/<n>        branch and bound (2 million nodes at most) on n objects x 4 tiers of a model's tensors;
//                        target: 200 in < 1 s; counters nodes, optimal (1 if proven), gap (proven bound)
// fabric/ring_allreduce/<n>  a 1 GB ring all-reduce over n UALink accelerators on the simulated fabric;
//                        counters events_per_second (target >= 5 million), simulated_s; target: 1,024 in < 2 s
// store/get, store/put   the tiered store beside std::unordered_map<key, std::vector<std::byte>> doing the
//                        same; counter x_unordered_map (store ops/s over the map's, same run); target >= 0.5

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/fabric.hpp>
#include <trinity/place.hpp>

#include <chrono>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

using namespace trinity;

namespace {

// A model's state as placement objects: weights, optimizer states, activations, KV blocks and embedding
// shards, hot to cold, in sizes a real model has, over HBM / CXL-coherent / CXL-capacity / NVMe.
place::placement_problem model_instance(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<place::object_profile> objects;
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    place::object_profile o;
    const int kind = static_cast<int>(i % 5);
    const double mib = 1024.0 * 1024.0;
    static constexpr double sizes[] = {256, 512, 64, 16,
                                       1024};  // MiB: weights, optimizer, activation, KV block, embedding
    static constexpr double rates[] = {2e4, 1e3, 5e4, 1e5, 2e3};  // accesses per second
    o.name = "object " + std::to_string(i);
    o.size = bytes{sizes[kind] * mib * (0.5 + unit(gen))};
    o.accesses_per_second = rates[kind] * (0.2 + 2 * unit(gen));
    o.bytes_per_access = bytes{kind == 3 ? 4096.0 : 64.0};
    o.write_fraction = kind == 1 ? 0.5 : kind == 2 ? 0.5 : 0.1;
    o.latency_weight = kind == 4 ? 0.2 : 1.0;
    total += o.size.value();
    objects.push_back(o);
  }
  // HBM 10%, CXL-coherent 20%, CXL-capacity 30%, NVMe the rest; latencies of the tier presets.
  std::vector<place::tier_slot> tiers{
      {"hbm", bytes{0.10 * total}, seconds{300e-9}, seconds{300e-9}, bytes_per_second{8e12}},
      {"cxl-coherent", bytes{0.20 * total}, seconds{400e-9}, seconds{450e-9}, bytes_per_second{128e9}},
      {"cxl-capacity", bytes{0.30 * total}, seconds{600e-9}, seconds{700e-9}, bytes_per_second{64e9}},
      {"nvme", bytes{total}, seconds{80e-6}, seconds{20e-6}, bytes_per_second{7e9}}};
  return {objects, tiers};
}

void bm_greedy(benchmark::State& state) {
  const auto p = model_instance(static_cast<std::size_t>(state.range(0)), 1);
  double cost = 0;
  for (auto _ : state) {
    const auto r = place::greedy(p, {.bound = false, .swap_rounds = 0});
    cost = r.cost;
    benchmark::DoNotOptimize(cost);
  }
  state.counters["objects"] = static_cast<double>(p.objects());
}

void bm_greedy_bound(benchmark::State& state) {
  const auto p = model_instance(static_cast<std::size_t>(state.range(0)), 1);
  double gap = 0;
  for (auto _ : state) {
    const auto r = place::greedy(p);
    gap = r.gap();
    benchmark::DoNotOptimize(gap);
  }
  state.counters["gap"] = gap;
}

void bm_exact(benchmark::State& state) {
  // Quick mode stops at 25 objects: the larger searches take seconds each.
  const auto p = model_instance(
      static_cast<std::size_t>(bench::quick() ? std::min<std::int64_t>(state.range(0), 25) : state.range(0)), 2);
  place::placement r;
  for (auto _ : state) {
    r = place::exact(p, {.node_limit = 2'000'000});
    benchmark::DoNotOptimize(r.cost);
  }
  state.counters["nodes"] = static_cast<double>(r.nodes);
  state.counters["optimal"] = r.optimal ? 1.0 : 0.0;
  state.counters["gap"] = r.gap();  // proven: 0; else how far above the optimum it may be at most
}

void bm_fabric_ring(benchmark::State& state) {
  const auto t = fabric::presets::ualink_pod(static_cast<int>(state.range(0)));
  const auto ranks = t.of_kind(fabric::node_kind::accelerator);
  fabric::collective_result r;
  std::uint64_t events = 0;
  for (auto _ : state) {
    r = fabric::ring_all_reduce(t, ranks, bytes{1e9});
    events += r.events;
  }
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["simulated_s"] = r.time.value();
}

const std::size_t keys = bench::sized<std::size_t>(100'000, 2'000);
constexpr std::size_t value_bytes = 256;

std::map<std::string, double>& rates() {
  static std::map<std::string, double> r;
  return r;
}

template <class F>
void timed(benchmark::State& state, const std::string& name, F f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) f();
  const double rate = static_cast<double>(state.iterations()) /
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rates()[name] = rate;
  const std::string peer = name.substr(0, name.find('/')) + "/unordered_map";
  if (const auto it = rates().find(peer); it != rates().end() && it->first != name)
    state.counters["x_unordered_map"] = rate / it->second;
}

void bm_map_get(benchmark::State& state) {
  std::unordered_map<std::uint64_t, std::vector<std::byte>> m;
  for (std::uint64_t k = 0; k < keys; ++k) m.emplace(k, std::vector<std::byte>(value_bytes));
  std::uint64_t k = 0;
  timed(state, "get/unordered_map", [&] {
    const auto it = m.find(k);
    benchmark::DoNotOptimize(it->second.data());
    k = (k + 7919) % keys;
  });
}

void bm_store_get(benchmark::State& state) {
  place::tier_resource hbm("hbm", bytes{static_cast<double>(keys * value_bytes / 4)}),
      cxl("cxl", bytes{static_cast<double>(keys * value_bytes)});
  place::tiered_store<std::uint64_t> store({&hbm, &cxl});
  const std::vector<std::byte> v(value_bytes);
  for (std::uint64_t k = 0; k < keys; ++k) store.put(k, v);
  std::uint64_t k = 0;
  timed(state, "get/store", [&] {
    const auto got = store.get(k);
    benchmark::DoNotOptimize(got->data());
    k = (k + 7919) % keys;
  });
}

void bm_map_put(benchmark::State& state) {
  std::unordered_map<std::uint64_t, std::vector<std::byte>> m;
  const std::vector<std::byte> v(value_bytes);
  for (std::uint64_t k = 0; k < keys; ++k) m.emplace(k, v);
  std::uint64_t k = 0;
  timed(state, "put/unordered_map", [&] {  // replace: a fresh copy in, the old one freed
    m[k] = std::vector<std::byte>(v);
    k = (k + 7919) % keys;
  });
}

void bm_store_put(benchmark::State& state) {
  place::tier_resource hbm("hbm", bytes{static_cast<double>(keys * value_bytes / 4)}),
      cxl("cxl", bytes{static_cast<double>(keys * value_bytes * 2)});
  place::tiered_store<std::uint64_t> store({&hbm, &cxl});
  const std::vector<std::byte> v(value_bytes);
  for (std::uint64_t k = 0; k < keys; ++k) store.put(k, v);
  std::uint64_t k = 0;
  timed(state, "put/store", [&] {
    store.put(k, v);
    k = (k + 7919) % keys;
  });
}

}  // namespace

BENCHMARK(bm_greedy)->Name("place/greedy")->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_greedy_bound)->Name("place/greedy_bound")->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_exact)
    ->Name("place/exact")
    ->Arg(25)
    ->Arg(40)
    ->Arg(50)
    ->Arg(200)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(bm_fabric_ring)->Name("fabric/ring_allreduce")->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_map_get)->Name("store/get/unordered_map");
BENCHMARK(bm_store_get)->Name("store/get/store");
BENCHMARK(bm_map_put)->Name("store/put/unordered_map");
BENCHMARK(bm_store_put)->Name("store/put/store");
TRINITY_BENCH_MAIN()
