// The unit algebra, checked at compile time: what must combine does, to the
// right type, and what must not is rejected by the constraints.
#include <trinity/units.hpp>

#include <type_traits>

using namespace trinity;
using namespace trinity::literals;

// bytes / (bytes per second) is a time; the reverse products close the loop.
static_assert(std::is_same_v<decltype(1_GB / 1_GBps), seconds>);
static_assert(std::is_same_v<decltype(1_s * 1_GBps), bytes>);
static_assert(std::is_same_v<decltype(1_TFLOP / 1_TFLOPs), seconds>);
static_assert(std::is_same_v<decltype(1_J / 1_s), watts>);
static_assert(std::is_same_v<decltype(1_W * 1_s), joules>);
static_assert(std::is_same_v<decltype(1_J / 1_GB), joules_per_byte>);
static_assert(std::is_same_v<decltype(1_FLOP / 1_B), flops_per_byte>);
static_assert(std::is_same_v<decltype(1.0 / 1_B), per_byte>);
static_assert(std::is_same_v<decltype(0.1_bpp * 1_px), bytes>);
// A ratio of like quantities is a plain number.
static_assert(std::is_same_v<decltype(1_GB / 1_MB), double>);

// Literal values: SI and IEC prefixes, bits versus bytes.
static_assert(1_GB == bytes{1e9});
static_assert(1_GiB == bytes{1073741824.0});
static_assert(400_Gbps == 50_GBps);
static_assert(8_Gbps == 1_GBps);
static_assert(1_us / 1_ns > 999.999 && 1_us / 1_ns < 1000.001);
static_assert(2.5_TFLOPs == flops_per_second{2.5e12});
static_assert(8_pJ_per_bit == joules_per_byte{64e-12});
static_assert(100_GB / 400_Gbps == 2_s);

// Sums of like quantities; none across dimensions.
static_assert(1_GB + 1_GB == 2_GB);
static_assert(same_dimension<bytes, bytes>);
static_assert(!same_dimension<bytes, seconds>);
static_assert(!same_dimension<bytes_per_second, flops_per_second>);
static_assert(!std::is_convertible_v<double, bytes>, "a bare number has no unit");
static_assert(!std::is_convertible_v<bytes, double>);
static_assert(Quantity<seconds> && !Quantity<double>);

// Ordering and min/max within one dimension.
static_assert(1_ns < 1_us && 1_TB > 1_GB);
static_assert(units::max(1_GB, 2_GB) == 2_GB && units::min(1_GB, 2_GB) == 1_GB);
