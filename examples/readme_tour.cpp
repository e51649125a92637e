// The code of the README's tour, compiled and run as a test so the README
// cannot drift from the library.
#include <trinity/links.hpp>
#include <trinity/model.hpp>
#include <trinity/units.hpp>

#include <iostream>
#include <type_traits>

using namespace trinity::literals;

int main() {
  // Units that cannot be mixed up.
  {
    trinity::seconds t = 100_GB / 400_Gbps;  // 2 s
    auto e = 1_GB * 20_pJ_per_bit;           // trinity::joules
    static_assert(std::is_same_v<decltype(e), trinity::joules>);
    std::cout << t << '\n';  // "2 s"
  }
  // Tiers and links that name their sources.
  {
    using namespace trinity;
    using route = link_traits<tiers::gb200_hbm3e, tiers::nvme>;
    static_assert(std::is_same_v<route::staging, tiers::grace_lpddr5x>);
    seconds t = route::transfer_time(16_GB);  // both latencies + 16 GB at the slower hop
    std::cout << t << '\n';
  }
  // The paper's models, constexpr.
  {
    constexpr trinity::model::diffusion_cache cache{50, 1e9_FLOP, 20, 2_GB};
    static_assert(cache.entries(10_GB) == 5);
    static_assert(cache.saved_per_request(0.6) == 1.2e10_FLOP);
    static_assert(trinity::model::memory_deficit(400_GB, 100_GB, 2) == 200_GB);
  }
}
