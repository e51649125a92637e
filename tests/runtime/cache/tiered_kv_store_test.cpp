// The tiered prefix cache holding its KV (cache/tiered_kv_store.hpp): with faults injected into every tier's
// allocations and into the store's copies, every block the cache holds has exactly its bytes in exactly the
// tier the cache says, nothing is held that the cache does not know, and no tier below the device ever holds
// more than its capacity. Without faults it is the bookkeeping cache, hit for hit.
#include <catch2/catch.hpp>

#include <trinity/cache/tiered_kv_store.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace cache_tiered_kv_store_test {

using namespace trinity;

namespace {

constexpr std::size_t block = 4096, longest = 12;

// A block's KV: bytes only its (tenant, id) produce.
void fill(std::uint64_t tenant, std::uint32_t id, std::span<std::byte> out) {
  std::uint64_t x = tenant * 0x9e3779b97f4a7c15ull + id + 1;
  for (auto& b : out) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    b = static_cast<std::byte>((x * 0x2545f4914f6cdd1dull) >> 56);
  }
}

bool holds(std::span<const std::byte> got, std::uint64_t tenant, std::uint32_t id) {
  std::vector<std::byte> want(block);
  fill(tenant, id, want);
  return got.size() == block && std::memcmp(got.data(), want.data(), block) == 0;
}

cache::tiered_prefix_config config() {
  const auto fast = [](double gbps) { return bytes_per_second{gbps * 1e9}; };
  return {.tiers = {{"hbm", 8, {}, {}}, {"host", 20, fast(50), seconds{1e-6}}, {"nvme", 40, fast(5), seconds{1e-4}}},
          .block_bytes = bytes{static_cast<double>(block)},
          .prefill = [](std::size_t d) { return flops{1e12 * static_cast<double>(d + 1)}; },
          .device_rate = flops_per_second{1e15}};
}

// Requests from three tenants, each chain a family's shared stem and a private tail, up to `longest` blocks.
struct request {
  std::uint64_t tenant;
  std::vector<std::uint32_t> chain;
};
std::vector<request> trace(std::size_t n) {
  std::mt19937_64 gen(7);
  std::vector<request> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t family = static_cast<std::uint32_t>(gen() % 9),
                        length = 1 + static_cast<std::uint32_t>(gen() % longest);
    request q{gen() % 3, {}};
    for (std::uint32_t d = 0; d < length; ++d)
      q.chain.push_back(d < 4 ? family * 100 + d : 1000 + static_cast<std::uint32_t>(i) * 16 + d);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace

TEST_CASE("under injected faults the KV store loses and corrupts nothing and never overfills a tier",
          "[cache][prefix][tiered][store]") {
  place::tier_resource hbm("hbm", bytes{(8.0 + longest) * block}), host("host", bytes{20.0 * block}),
      nvme("nvme", bytes{40.0 * block});
  cache::tiered_kv_store kv(config(), {&hbm, &host, &nvme}, fill);
  std::mt19937_64 gen(11);
  std::bernoulli_distribution fault(0.05);
  std::uint64_t refusals = 0, interruptions = 0;
  for (auto* t : {&hbm, &host, &nvme}) t->set_fault_hook([&](std::size_t) { return fault(gen) && ++refusals; });
  kv.store().set_copy_fault_hook([&](const auto&, std::size_t, std::size_t) { return fault(gen) && ++interruptions; });

  std::size_t wrong = 0, strays = 0, overfull = 0, served_wrong = 0;
  for (const auto& q : trace(5000)) {
    const auto got = kv.request(q.tenant, q.chain);
    // Every block the request was served is held, and holds its own bytes.
    for (std::size_t d = 0; d < got.hit_blocks; ++d) {
      const auto b = kv.read(q.tenant, q.chain[d]);
      served_wrong += b && !holds(*b, q.tenant, q.chain[d]);
    }
    // Everything the store holds is a block the cache holds, in the tier the cache says, with its bytes.
    std::uint64_t held = 0;
    kv.store().for_each([&](const auto& k, std::span<const std::byte> v, const auto& info) {
      ++held;
      const auto tier = kv.cache().tier_of(k.tenant, k.id);
      strays += !tier || *tier != info.tier;
      wrong += !holds(v, k.tenant, k.id);
    });
    const auto resident = kv.cache().resident();
    strays += held != resident[0] + resident[1] + resident[2];
    overfull += host.used() > host.capacity() || nvme.used() > nvme.capacity() || hbm.used() > hbm.capacity();
    overfull += resident[1] > 20 || resident[2] > 40;
  }
  CHECK(wrong == 0);
  CHECK(strays == 0);
  CHECK(overfull == 0);
  CHECK(served_wrong == 0);
  // The faults bit: blocks were refused, loads recomputed and demotions dropped because of them.
  const auto& c = kv.cache().counts();
  CHECK(refusals > 100);
  CHECK(interruptions > 10);
  CHECK(c[0].refused + c[1].refused + c[2].refused > 100);
  CHECK(c[1].hits + c[2].hits > 100);  // and the tiers below still served
}

TEST_CASE("without faults the KV store is the bookkeeping cache, hit for hit", "[cache][prefix][tiered][store]") {
  place::tier_resource hbm("hbm", bytes{(8.0 + longest) * block}), host("host", bytes{20.0 * block}),
      nvme("nvme", bytes{40.0 * block});
  cache::tiered_kv_store kv(config(), {&hbm, &host, &nvme}, fill);
  cache::tiered_prefix_cache plain(config());
  for (const auto& q : trace(3000)) {
    const auto a = kv.request(q.tenant, q.chain), b = plain.request(q.tenant, q.chain);
    REQUIRE(a.hit_blocks == b.hit_blocks);
    REQUIRE(a.served_blocks == b.served_blocks);
  }
  for (std::size_t t = 0; t < 3; ++t) {
    CHECK(kv.cache().counts()[t].hits == plain.counts()[t].hits);
    CHECK(kv.cache().counts()[t].dropped == plain.counts()[t].dropped);
    CHECK(kv.cache().counts()[t].refused == 0);
  }
  CHECK(kv.cache().resident() == plain.resident());
  CHECK(host.used() == kv.cache().resident()[1] * block);
}

TEST_CASE("a KV store needs a resource per tier and keeps the move hook its own", "[cache][prefix][tiered][store]") {
  place::tier_resource a("a", bytes{1e6}), b("b", bytes{1e6});
  CHECK_THROWS_WITH(cache::tiered_kv_store(config(), {&a, &b}, fill),
                    Catch::Contains("tiers: give one tier resource per cache tier (3)"));
  auto hooked = config();
  hooked.move = [](std::uint64_t, std::uint32_t, std::size_t, std::size_t) { return true; };
  place::tier_resource c("c", bytes{1e6});
  CHECK_THROWS_WITH(cache::tiered_kv_store(hooked, {&a, &b, &c}, fill),
                    Catch::Contains("move: is the store's own hook"));
}

TEST_CASE("a device resource without room for the chain says so in the request's outcome",
          "[cache][prefix][tiered][store]") {
  // Room for the cache's 8 blocks and no chain above them (the contract asks for capacity + the longest chain):
  // a 12-block request cannot be held whole, and its outcome counts the blocks the device refused.
  place::tier_resource small("hbm", bytes{8.0 * block}), host("host", bytes{20.0 * block}),
      nvme("nvme", bytes{40.0 * block});
  cache::tiered_kv_store kv(config(), {&small, &host, &nvme}, fill);
  std::vector<std::uint32_t> chain(longest);
  for (std::uint32_t d = 0; d < longest; ++d) chain[d] = d;
  const auto first = kv.request(1, chain);
  CHECK(first.refused_moves == longest - 8);
  CHECK(kv.cache().counts()[0].refused == longest - 8);
  // With the contract's room nothing is refused, request after request.
  place::tier_resource roomy("hbm", bytes{(8.0 + longest) * block}), host2("host", bytes{20.0 * block}),
      nvme2("nvme", bytes{40.0 * block});
  cache::tiered_kv_store ok(config(), {&roomy, &host2, &nvme2}, fill);
  for (const auto& q : trace(200)) REQUIRE(ok.request(q.tenant, q.chain).refused_moves == 0);
}

}  // namespace cache_tiered_kv_store_test
