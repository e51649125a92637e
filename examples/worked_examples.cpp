// The paper's three worked examples, through the library rather than the
// command line: each trade is a TradeoffPolicy priced as a resource vector.
#include <trinity/model.hpp>
#include <trinity/resources/price_list.hpp>
#include <trinity/units.hpp>

#include <iostream>

int main() {
  using namespace trinity::literals;
  namespace m = trinity::model;
  using trinity::to_string;

  // Compute -> bandwidth (§3.1.2).
  const m::compute_for_bandwidth<> codec{m::paper_video_frontier(), 921600_px};
  const auto c = codec.price({1_GFLOP, 100_GFLOP});
  std::cout << "compute -> bandwidth: spend " << to_string(c.spent()) << " per 720p frame, save "
            << to_string(c.saved()) << " (" << codec.curve.compression_gain(1_GFLOP, 100_GFLOP)
            << "x less bandwidth for 100x compute)\n";

  // Bandwidth -> memory (§4.1.2).
  const auto d = m::bandwidth_for_memory{0.5}.price({400_GB, 100_GB, 2});
  std::cout << "bandwidth -> memory: spend " << to_string(d.spent()) << " of traffic per iteration, save "
            << to_string(d.saved()) << " of memory\n";

  // Memory -> compute (§5.1.2).
  constexpr m::diffusion_cache cache{50, 1_GFLOP, 20, 2_GB};
  const auto k = m::memory_for_compute{cache}.price({10_GB, 0.6});
  std::cout << "memory -> compute: spend " << to_string(k.spent()) << " of cache, save " << to_string(k.saved())
            << " per request (" << cache.entries(10_GB) << " entries)\n";

  // The same trade in time and energy on one H100 SXM: 989 TFLOP/s dense BF16
  // at up to 700 W (NVIDIA H100 data sheet), one 400 Gb/s NIC at 30 pJ/bit
  // (tiers/parameters.hpp). Work stated in FLOPs becomes seconds and joules.
  const trinity::price_list h100{989_TFLOPs, 700_W / 989_TFLOPs, 400_Gbps, 30_pJ_per_bit};
  const auto on_h100 = k.priced(h100);
  std::cout << "  on an H100 that is " << to_string(on_h100.time_saved()) << " and "
            << to_string(on_h100.energy_saved()) << " saved per request\n";
}
