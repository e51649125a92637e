// Built against an installed trinity by run.cmake, linking trinity::trinity alone; exits 0 only when the
// installed headers, version and models work, and a compressed collective over int8 frames builds, links and
// runs without zstd or lz4 (frame decoding is open: only the codecs a program includes register).
#include <trinity/trinity.hpp>

#include <trinity/compress/quantize.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "expect.hpp"

namespace {
// Each rank's gradient, and the ring's int8 sum on every rank beside the exact one.
bool int8_ring_sums(int ranks, std::size_t count) {
  using namespace trinity;
  comm::thread_world world(ranks);
  std::vector<std::vector<float>> out(static_cast<std::size_t>(ranks));
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    std::vector<float> g(count);
    for (std::size_t i = 0; i < count; ++i)
      g[i] = std::sin(0.01f * static_cast<float>(i) + static_cast<float>(c.rank()));
    comm::compressed_all_reduce<compress::int8, comm::compressed_ring> ar;
    ar(c, std::span<float>(g));
    out[static_cast<std::size_t>(c.rank())] = g;
  });
  double worst = 0;
  for (std::size_t i = 0; i < count; ++i) {
    double exact = 0;
    for (int r = 0; r < ranks; ++r) exact += std::sin(0.01 * static_cast<double>(i) + r);
    worst = std::max(worst, std::abs(out[0][i] - exact));
    for (const auto& o : out)
      if (std::memcmp(&o[i], &out[0][i], sizeof(float)) != 0) return false;
  }
  return worst < 0.05 * ranks;  // int8's step is max|x| / 127 per block, summed over the ring's hops
}

// A zstd frame (int8's frame with zstd's id) is refused by name: this program includes no lossless codec.
std::string zstd_refusal() {
  using namespace trinity::compress;
  std::vector<float> x(256, 1.0f);
  frame_buffer f;
  int8{}.encode(x, f);
  f.data()[5] = static_cast<std::byte>(codec::zstd);
  try {
    (void)decode(f.bytes(), {.verify_hashes = false});
  } catch (const decode_error& e) {
    return e.field() + ": " + e.problem();
  }
  return "(decoded)";
}
}  // namespace

int main() {
  using namespace trinity::literals;
  constexpr trinity::model::diffusion_cache cache{50, 1e9_FLOP, 20, 2_GB};
  static_assert(cache.saved_per_request(0.6) == 1.2e10_FLOP);
  std::printf("trinity %s from an install:\n", trinity::version_string);
  EXPECT(trinity::model::memory_deficit(400_GB, 100_GB, 2) == 200_GB && trinity::version_major >= 0,
         "the models and the version");
  EXPECT(int8_ring_sums(3, 4099), "an int8 compressed ring sums, identically on every rank, with no zstd");
  EXPECT(zstd_refusal() ==
             "header.codec: 3 (zstd) is a codec this program does not include. Fix: include "
             "<trinity/compress/lossless/zstd.hpp> (or <trinity/compress.hpp>) and link trinity::compress, which "
             "brings zstd and lz4",
         "a zstd frame is refused, naming the header and target that decode it");
  return consumer::verdict();
}
