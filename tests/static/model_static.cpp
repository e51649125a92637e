// The paper's worked examples (the paper §3-5), evaluated by the compiler:
// the models are constexpr and these are their exact values.
#include <trinity/model.hpp>
#include <trinity/units/literals.hpp>

using namespace trinity;
using namespace trinity::literals;
namespace m = trinity::model;

// §5.1.2: S 50, c_step 1e9, r 20, s_e 2 GB, M 10 GB, h 0.6.
constexpr m::diffusion_cache paper_cache{50, 1e9_FLOP, 20, 2_GB};
static_assert(paper_cache.full_cost() == 5e10_FLOP);
static_assert(paper_cache.saved_per_hit() == 2e10_FLOP);
static_assert(paper_cache.entries(10_GB) == 5);
static_assert(paper_cache.saved_per_request(0.6) == 1.2e10_FLOP);
static_assert(paper_cache.expected_cost(0.6) == 3.8e10_FLOP);
static_assert(m::memory_for_compute{paper_cache}.price({10_GB, 0.6}).saved() == 1.2e10_FLOP);
static_assert(m::memory_for_compute{paper_cache}.price({10_GB, 0.6}).spent() == 10_GB);

// §4.1.2: 400 GB on 2 x 100 GB -> 200 GB deficit; k 0.5 -> 100 GB per iteration.
static_assert(m::memory_deficit(400_GB, 100_GB, 2) == 200_GB);
static_assert(m::communication_cost(0_B, 0.0, 0.5, 200_GB) == 100_GB);
static_assert(m::memory_deficit(400_GB, 100_GB, 4) == 0_B);
static_assert(m::devices_to_fit(400_GB, 100_GB) == 4);
constexpr auto deficit_trade = m::bandwidth_for_memory{0.5}.price({400_GB, 100_GB, 2});
static_assert(deficit_trade.spent() == 100_GB && deficit_trade.saved() == 200_GB && deficit_trade.rate() == 2.0);

// §3.1.2: the frontier passes through its measured points, and 100x more
// compute buys 4x less bandwidth.
constexpr auto video = m::paper_video_frontier();
static_assert(video.bandwidth_at(1e9_FLOP) == 0.15_bpp);
static_assert(video.bandwidth_at(1.4e10_FLOP) == 0.075_bpp);
static_assert(video.bandwidth_at(1e11_FLOP) == 0.0375_bpp);
static_assert(video.compression_gain(1e9_FLOP, 1e11_FLOP) == 4.0);
static_assert(video.compute_for(0.075_bpp) == 1.4e10_FLOP);
