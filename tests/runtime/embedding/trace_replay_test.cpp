#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <trinity/detail/splitmix.hpp>
#include <trinity/embedding/trace_replay.hpp>
#include <trinity/io/dlrm_trace.hpp>

namespace embedding_trace_replay_test {

using namespace trinity;

namespace {

// An independent reference: a cache as a list of (row, last use), evicting by a scan; LFU counts every row's uses
// since the start, ties to the least recently used, then the lower row (rows numbered in order of first use, as
// the replay numbers them). Each batch's rows prefetched first when asked (neither hit nor miss).
struct reference_result {
  std::uint64_t hits = 0, misses = 0, prefetched = 0;
};
reference_result reference(const std::vector<std::uint64_t>& indices, const std::vector<std::size_t>& offsets,
                           std::size_t capacity, embedding::cache_policy policy, std::size_t batch, bool prefetch) {
  struct held {
    std::uint64_t row, last;
  };
  std::vector<held> cache;
  std::map<std::uint64_t, std::uint64_t> uses;
  reference_result r;
  std::uint64_t tick = 0;
  std::set<std::uint64_t> pinned;  // a batch's rows while it is prefetched: never evicted for one another
  const auto bring = [&](std::uint64_t i) {
    if (capacity == 0) return false;
    if (cache.size() == capacity) {
      auto victim = cache.end();
      for (auto it = cache.begin(); it != cache.end(); ++it) {
        if (pinned.contains(it->row)) continue;
        const bool before =
            victim == cache.end() ||
            (policy == embedding::cache_policy::lru
                 ? it->last < victim->last
                 : (uses[it->row] != uses[victim->row]
                        ? uses[it->row] < uses[victim->row]
                        : (it->last != victim->last ? it->last < victim->last : it->row < victim->row)));
        if (before) victim = it;
      }
      if (victim == cache.end()) return false;
      cache.erase(victim);
    }
    cache.push_back({i, tick});
    return true;
  };
  const auto find = [&](std::uint64_t i) {
    return std::find_if(cache.begin(), cache.end(), [&](const held& h) { return h.row == i; });
  };
  const std::size_t bags = offsets.size() - 1;
  for (std::size_t first = 0; first < bags; first += batch) {
    const std::size_t from = offsets[first], to = offsets[std::min(bags, first + batch)];
    if (prefetch) {
      pinned.insert(indices.begin() + static_cast<std::ptrdiff_t>(from),
                    indices.begin() + static_cast<std::ptrdiff_t>(to));
      for (std::size_t k = from; k < to; ++k)
        if (find(indices[k]) == cache.end() && bring(indices[k])) ++r.prefetched;
      pinned.clear();
    }
    for (std::size_t k = from; k < to; ++k) {
      const auto i = indices[k];
      ++uses[i];
      ++tick;
      if (const auto it = find(i); it != cache.end()) {
        ++r.hits;
        it->last = tick;
      } else {
        ++r.misses;
        bring(i);
      }
    }
  }
  return r;
}

// SYNTHETIC: bags of 1-5 rows drawn from a skewed distribution over sparse, large row ids (as a trace's are).
void synthetic(std::vector<std::uint64_t>& indices, std::vector<std::size_t>& offsets, std::size_t bags) {
  std::uint64_t s = 5;
  offsets = {0};
  for (std::size_t b = 0; b < bags; ++b) {
    const std::size_t n = 1 + trinity::detail::splitmix_next(s) % 5;
    for (std::size_t k = 0; k < n; ++k) {
      const double u = static_cast<double>(trinity::detail::splitmix_next(s) >> 11) * 0x1p-53;
      const auto rank = static_cast<std::uint64_t>(std::floor(std::pow(400.0, u * u)));  // skewed to small ranks
      indices.push_back(rank * 1'000'003ULL + 17);
    }
    offsets.push_back(indices.size());
  }
}

}  // namespace

TEST_CASE("a replayed trace's hits equal an independent LRU and LFU, with and without prefetch", "[embedding]") {
  std::vector<std::uint64_t> indices;
  std::vector<std::size_t> offsets;
  synthetic(indices, offsets, 600);
  const embedding::bag_batch trace{indices, offsets};
  const auto rows = embedding::renumber(indices).rows;
  for (const auto policy : {embedding::cache_policy::lru, embedding::cache_policy::lfu})
    for (const std::size_t cache : {std::size_t{0}, std::size_t{8}, std::size_t{40}, rows})
      for (const bool prefetch : {false, true}) {
        CAPTURE(policy == embedding::cache_policy::lru, cache, prefetch);
        const auto got = embedding::replay(trace, 512, cache, policy, 32, prefetch);
        const auto want = reference(embedding::renumber(indices).indices, offsets, cache, policy, 32, prefetch);
        CHECK(got.traffic.hits == want.hits);
        CHECK(got.traffic.misses == want.misses);
        CHECK(got.traffic.prefetched == want.prefetched);
        CHECK(got.batches == (600 + 31) / 32);
        CHECK(got.rows == rows);
        // Bytes: through a cache every lookup reads the fast tier; the capacity tier gives misses and prefetches.
        const double lookups = static_cast<double>(indices.size());
        CHECK(got.traffic.bytes[0] == (cache ? lookups * 512 : 0.0));
        CHECK(got.traffic.bytes[1] == 512.0 * static_cast<double>(want.misses + want.prefetched));
      }
}

TEST_CASE("a static cache of the most looked-up rows serves their share of the lookups", "[embedding]") {
  // Row 9 four times, row 5 three, row 1 twice, row 7 once: 10 lookups.
  const std::vector<std::uint64_t> trace{9, 5, 9, 1, 5, 9, 7, 5, 1, 9};
  CHECK(embedding::static_cache_hit_rate(trace, 0) == 0.0);
  CHECK(embedding::static_cache_hit_rate(trace, 1) == Approx(0.4));
  CHECK(embedding::static_cache_hit_rate(trace, 2) == Approx(0.7));
  CHECK(embedding::static_cache_hit_rate(trace, 3) == Approx(0.9));
  CHECK(embedding::static_cache_hit_rate(trace, 100) == 1.0);
  CHECK(embedding::renumber(trace).indices == std::vector<std::uint64_t>{0, 1, 0, 2, 1, 0, 3, 1, 2, 0});
}

TEST_CASE("the shipped DLRM trace replays: LRU's hits never fall as its cache grows", "[embedding][dlrm]") {
  const auto trace = io::read_dlrm_trace(std::string(TRINITY_SOURCE_DIR) + "/docs/examples/dlrm-trace");
  const auto& t = trace[1];
  const embedding::bag_batch bags{t.indices, t.offsets};
  std::uint64_t before = 0;
  for (const std::size_t cache : {0u, 64u, 256u, 1024u, 4096u}) {
    const auto r = embedding::replay(bags, 512, cache, embedding::cache_policy::lru, 256);
    CHECK(r.traffic.hits >= before);
    before = r.traffic.hits;
    CHECK(r.traffic.hits + r.traffic.misses == t.indices.size());
    CHECK(r.batches == 8);
  }
}

}  // namespace embedding_trace_replay_test
