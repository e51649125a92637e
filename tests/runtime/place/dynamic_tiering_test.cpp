// Dynamic tiering on a phase-changing trace against the offline optimum (which
// knows each phase's hot set in advance and pays its migrations too), and on
// a thrashing pattern, where hysteresis must stop it migrating on every access.
#include <catch2/catch.hpp>

#include <trinity/place/dynamic_tiering.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace place_dynamic_tiering_test {

using namespace trinity;

namespace {

constexpr double fast_ns = 100, slow_ns = 1000;                   // CXL-coherent vs capacity-class latencies, 10x apart
constexpr double object_bytes = 4096, migrate_ns_per_byte = 0.1;  // 10 GB/s of migration bandwidth

struct trace {
  std::vector<std::uint32_t> accesses;
  std::vector<std::vector<std::uint32_t>> hot_sets;  // per phase
  std::size_t phase_length;
};

trace phased_trace(std::size_t objects, std::size_t hot, std::size_t phases, std::size_t length, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<std::uint32_t> any(0, static_cast<std::uint32_t>(objects - 1));
  trace t{{}, {}, length};
  std::vector<std::uint32_t> ids(objects);
  std::iota(ids.begin(), ids.end(), 0u);
  for (std::size_t p = 0; p < phases; ++p) {
    std::shuffle(ids.begin(), ids.end(), gen);
    t.hot_sets.emplace_back(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(hot));
    std::uniform_int_distribution<std::size_t> in_hot(0, hot - 1);
    for (std::size_t a = 0; a < length; ++a)
      t.accesses.push_back(unit(gen) < 0.9 ? t.hot_sets.back()[in_hot(gen)] : any(gen));
  }
  return t;
}

}  // namespace

TEST_CASE("dynamic tiering stays within 10% of the offline optimum on a phase-changing trace", "[place][tiering]") {
  const std::size_t objects = 1000, fast_slots = 100;
  const auto t = phased_trace(objects, fast_slots, 10, 200'000, 9);
  place::dynamic_tiering policy(
      std::vector<double>(objects, object_bytes), {fast_slots * object_bytes, objects * object_bytes},
      {.epoch = 1000, .sample_period = 1, .decay = 0.3, .hysteresis = 1.5, .migration_budget = 200 * object_bytes});
  double dynamic = 0;
  for (const auto id : t.accesses) {
    dynamic += policy.tier_of(id) == 0 ? fast_ns : slow_ns;
    policy.access(id);
  }
  dynamic += policy.migrated_bytes() * migrate_ns_per_byte;

  // Offline: each phase's best static placement (its most accessed objects in the fast tier), chosen
  // before the phase starts, plus the bytes moved between consecutive placements.
  double offline = 0;
  std::vector<char> fast(objects, 0);
  for (std::uint32_t i = 0; i < fast_slots; ++i) fast[i] = 1;  // the same start as the policy's spill
  for (std::size_t p = 0; p < t.hot_sets.size(); ++p) {
    std::vector<std::size_t> count(objects, 0);
    for (std::size_t a = p * t.phase_length; a < (p + 1) * t.phase_length; ++a) ++count[t.accesses[a]];
    std::vector<std::uint32_t> ids(objects);
    std::iota(ids.begin(), ids.end(), 0u);
    std::partial_sort(ids.begin(), ids.begin() + fast_slots, ids.end(),
                      [&](auto a, auto b) { return count[a] > count[b]; });
    std::vector<char> next(objects, 0);
    for (std::size_t k = 0; k < fast_slots; ++k) next[ids[k]] = 1;
    for (std::size_t i = 0; i < objects; ++i) {
      if (next[i] && !fast[i]) offline += 2 * object_bytes * migrate_ns_per_byte;  // one in, one out
      offline += static_cast<double>(count[i]) * (next[i] ? fast_ns : slow_ns);
    }
    fast = next;
  }
  INFO("dynamic " << dynamic / 1e6 << " ms, offline optimum " << offline / 1e6 << " ms, " << policy.migrations()
                  << " migrations");
  CHECK(dynamic <= 1.10 * offline);
  CHECK(dynamic >= offline * 0.999);  // the optimum is a lower bound: a cheaper result would mean a wrong cost
  CHECK(policy.used(0) <= policy.capacity(0));
}

TEST_CASE("hysteresis stops a thrashing pattern from migrating on every access", "[place][tiering]") {
  // Two objects of equal heat that cannot both be fast: A, B, A, B, ...
  const auto run = [](double hysteresis, std::size_t epoch) {
    place::dynamic_tiering policy({1.0, 1.0}, {1.0, 2.0},
                                  {.epoch = epoch, .sample_period = 1, .decay = 0.5, .hysteresis = hysteresis});
    for (int a = 0; a < 100'000; ++a) policy.access(static_cast<std::uint32_t>(a % 2));
    return policy.migrations();
  };
  CHECK(run(1.5, 100) == 0);  // never: over an epoch neither is 1.5x hotter than the other
  CHECK(run(1.5, 1000) == 0);
  CHECK(run(1.0, 1) > 10'000);  // deciding after every access, the last one touched looks hottest: it
                                // moves all the time, which is what epochs and hysteresis prevent
}

TEST_CASE("an epoch never migrates more than its budget", "[place][tiering]") {
  const auto t = phased_trace(500, 50, 4, 50'000, 3);
  const double budget = 10 * object_bytes;
  place::dynamic_tiering policy(
      std::vector<double>(500, object_bytes), {50 * object_bytes, 500 * object_bytes},
      {.epoch = 500, .sample_period = 1, .decay = 0.3, .hysteresis = 1.2, .migration_budget = budget});
  double worst = 0;
  for (std::size_t a = 0; a < t.accesses.size(); ++a) {
    policy.access(t.accesses[a]);
    if ((a + 1) % 500 == 0) {
      double epoch_bytes = 0;
      for (const auto& m : policy.moves()) epoch_bytes += object_bytes + 0 * m.object;
      worst = std::max(worst, epoch_bytes);
    }
  }
  CHECK(worst <= budget);
  CHECK(worst > 0);
  CHECK(policy.migrations() > 0);
}

}  // namespace place_dynamic_tiering_test
