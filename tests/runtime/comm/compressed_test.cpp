// Compressed all-reduce on the in-process backend: the identity codec gives
// the plain ring's bits; lossy codecs stay within their bound, give every rank
// the same bits, send fewer bytes, and lose nothing over steps thanks to error
// feedback (the sum of outputs equals the sum of inputs up to what is still
// carried).
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>
#include <trinity/comm/compressed.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace comm_compressed_test {

using namespace trinity;

namespace {

std::vector<float> gradient(int rank, std::size_t count, std::uint32_t step = 0) {
  std::mt19937 gen(static_cast<std::uint32_t>(rank) * 7919u + step);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> g(count);
  for (auto& x : g) x = d(gen);
  return g;
}

// The exact sum over ranks of gradient(r, count), in double.
std::vector<double> true_sum(int ranks, std::size_t count) {
  std::vector<double> s(count, 0.0);
  for (int r = 0; r < ranks; ++r) {
    const auto g = gradient(r, count);
    for (std::size_t i = 0; i < count; ++i) s[i] += g[i];
  }
  return s;
}

using int8_ring = comm::compressed_all_reduce<compress::int8, comm::compressed_ring>;
using identity_ring = comm::compressed_all_reduce<compress::identity, comm::compressed_ring>;
using topk_gather = comm::compressed_all_reduce<compress::topk<std::ratio<1, 100>>, comm::compressed_gather>;

}  // namespace

TEST_CASE("a compressed ring with the identity codec gives the plain ring's bits", "[comm][compressed]") {
  for (int ranks : {1, 2, 3, 5}) {
    const std::size_t count = 10'007;
    comm::thread_world world(ranks);
    std::vector<std::vector<float>> plain(static_cast<std::size_t>(ranks)), coded(plain.size());
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      auto a = gradient(c.rank(), count), b = a;
      comm::all_reduce(c, std::span<float>(a), comm::reduce_op::sum, comm::algorithm::ring);
      identity_ring ar;
      ar(c, std::span<float>(b));
      plain[static_cast<std::size_t>(c.rank())] = a;
      coded[static_cast<std::size_t>(c.rank())] = b;
    });
    for (int r = 0; r < ranks; ++r)
      REQUIRE(std::memcmp(plain[static_cast<std::size_t>(r)].data(), coded[static_cast<std::size_t>(r)].data(),
                          count * sizeof(float)) == 0);
  }
}

TEST_CASE("an int8 compressed ring is close, identical on every rank, and sends about a quarter of the bytes",
          "[comm][compressed]") {
  const int ranks = 4;
  const std::size_t count = 1 << 16;
  comm::thread_world world(ranks);
  std::vector<std::vector<float>> out(ranks);
  std::vector<std::uint64_t> sent(ranks);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    auto g = gradient(c.rank(), count);
    int8_ring ar;
    ar(c, std::span<float>(g));
    out[static_cast<std::size_t>(c.rank())] = g;
    sent[static_cast<std::size_t>(c.rank())] = c.bytes_sent();
  });
  double err = 0, norm = 0;
  const auto truth = true_sum(ranks, count);
  for (std::size_t i = 0; i < count; ++i) {
    const double t = truth[i];
    err += (out[0][i] - t) * (out[0][i] - t);
    norm += t * t;
  }
  CHECK(std::sqrt(err / norm) < 0.02);  // int8 absmax: ~0.5% per hop, 3 hops and a gather
  CHECK(std::sqrt(err / norm) > 0.0);   // it did quantize
  for (int r = 1; r < ranks; ++r)
    REQUIRE(std::memcmp(out[0].data(), out[static_cast<std::size_t>(r)].data(), count * sizeof(float)) == 0);
  const double dense = 2.0 * (ranks - 1) / ranks * count * sizeof(float);
  for (auto s : sent) CHECK(static_cast<double>(s) < 0.30 * dense);
}

TEST_CASE("error feedback loses nothing over steps: outputs sum to the inputs less what is still carried",
          "[comm][compressed]") {
  const int ranks = 3;
  const std::size_t count = 4096;
  const std::uint32_t steps = 40;
  comm::thread_world world(ranks);
  std::vector<double> out_sum(count, 0.0), in_sum(count, 0.0), carried(count, 0.0);
  std::mutex m;
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    topk_gather ar;
    std::vector<double> mine_out(count, 0.0);
    for (std::uint32_t s = 0; s < steps; ++s) {
      auto g = gradient(c.rank(), count, s);
      {
        std::lock_guard lock(m);
        for (std::size_t i = 0; i < count; ++i) in_sum[i] += g[i];
      }
      ar(c, std::span<float>(g));
      for (std::size_t i = 0; i < count; ++i) mine_out[i] += g[i];
    }
    std::lock_guard lock(m);
    if (c.rank() == 0) out_sum = mine_out;
    for (std::size_t i = 0; i < count; ++i) carried[i] += ar.carried_error()[i];
  });
  // Every output is the sum of what the ranks sent; what they did not send yet is carried.
  double worst = 0;
  for (std::size_t i = 0; i < count; ++i) worst = std::max(worst, std::abs(out_sum[i] + carried[i] - in_sum[i]));
  CHECK(worst < 1e-3);
  // And the carry is real: top-1% leaves most of a step behind.
  double carried_norm = 0;
  for (double e : carried) carried_norm += e * e;
  CHECK(carried_norm > 1.0);
}

TEST_CASE("a top-k gather gives every rank the same bits and sends about n-1 frames", "[comm][compressed]") {
  const int ranks = 4;
  const std::size_t count = 100'000;
  comm::thread_world world(ranks);
  std::vector<std::vector<float>> out(ranks);
  std::vector<std::uint64_t> sent(ranks), frame(ranks);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    auto g = gradient(c.rank(), count);
    topk_gather ar;
    ar(c, std::span<float>(g));
    out[static_cast<std::size_t>(c.rank())] = g;
    sent[static_cast<std::size_t>(c.rank())] = c.bytes_sent();
    frame[static_cast<std::size_t>(c.rank())] = ar.frame_bytes();
  });
  for (int r = 1; r < ranks; ++r)
    REQUIRE(std::memcmp(out[0].data(), out[static_cast<std::size_t>(r)].data(), count * sizeof(float)) == 0);
  // 1% of 100,000 values with their indices: ~8 kB a frame against 400 kB dense.
  CHECK(frame[0] < 10'000);
  const auto largest = *std::max_element(frame.begin(), frame.end());
  for (auto s : sent) CHECK(s == (ranks - 1) * (largest + sizeof(std::uint64_t)));
  std::size_t nonzero = 0;
  for (float x : out[0]) nonzero += x != 0.0f;
  CHECK(nonzero <= ranks * count / 100);
  CHECK(nonzero >= count / 100);
}

TEST_CASE(
    "a compressed reduce-scatter leaves chunk r on rank r: the exact ring's bits with the identity codec, "
    "and with int8 the outputs plus what is carried equal the inputs",
    "[comm][compressed]") {
  const int ranks = 3, steps = 30;
  const std::size_t count = 5003;
  const comm::partition part(count, ranks);
  comm::thread_world world(ranks);
  std::vector<std::vector<float>> exact(ranks), coded(ranks), carried(ranks);
  std::vector<double> out_sum(count, 0.0);  // each rank fills its own chunk
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    const auto g = gradient(c.rank(), count);
    exact[r].resize(part.size(c.rank()));
    coded[r].resize(part.size(c.rank()));
    comm::reduce_scatter(c, std::span<const float>(g), std::span<float>(exact[r]), comm::reduce_op::sum,
                         comm::algorithm::ring);
    identity_ring id;
    id.reduce_scatter(c, std::span<const float>(g), std::span<float>(coded[r]));
    int8_ring q;
    std::vector<float> mine(part.size(c.rank()));
    for (int s = 0; s < steps; ++s) {
      q.reduce_scatter(c, std::span<const float>(g), std::span<float>(mine));
      for (std::size_t i = 0; i < mine.size(); ++i) out_sum[part.begin(c.rank()) + i] += mine[i];
    }
    carried[r].assign(q.carried_error().begin(), q.carried_error().end());
  });
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    REQUIRE(std::memcmp(exact[i].data(), coded[i].data(), exact[i].size() * sizeof(float)) == 0);
  }
  // What the chunks' owners received over the steps, plus what every rank still carries, is every input.
  double worst = 0, carried_norm = 0;
  const auto truth = true_sum(ranks, count);
  for (std::size_t i = 0; i < count; ++i) {
    const double in = steps * truth[i];
    double carry = 0;
    for (int r = 0; r < ranks; ++r) carry += carried[static_cast<std::size_t>(r)][i];
    worst = std::max(worst, std::abs(out_sum[i] + carry - in));
    carried_norm += carry * carry;
  }
  CHECK(worst < 1e-3);
  CHECK(carried_norm > 1e-4);  // int8 did lose something each step: the identity would carry nothing
}

}  // namespace comm_compressed_test
