// The GPU codecs write exactly the bodies the CPU codecs write, and decode them to the same floats:
// parity with compress::bf16 and compress::int8 on sizes around the 128-element block, blocks of zeros,
// of tiny values (the double-precision path) and of mixed signs.
#include <catch2/catch.hpp>

#include <trinity/backends/cuda/codecs.cuh>

#include "codec_reference.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace trinity;
using trinity::testing::cpu_codec;

namespace {

std::vector<float> gradient(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = g(rng);
  if (n > 300) {
    for (std::size_t i = 128; i < 256; ++i) x[i] = 0.0f;           // a block of zeros
    for (std::size_t i = 256; i < 300; ++i) x[i] = x[i] * 1e-35f;  // a tiny block: the double path
  }
  if (n > 1000) x[999] = 1e30f;  // one huge value in its block
  return x;
}

template <class T>
struct device_buffer {
  T* p = nullptr;
  explicit device_buffer(std::size_t n) { cuda::detail::check(cudaMalloc(&p, n * sizeof(T) + 1), "cudaMalloc"); }
  ~device_buffer() { cudaFree(p); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

std::vector<std::byte> gpu_body(cpu_codec c, const std::vector<float>& x) {
  const std::size_t n = x.size();
  const std::size_t body = c == cpu_codec::bf16 ? 2 * n : cuda::int8_body_bytes(n);
  device_buffer<float> in(n);
  device_buffer<std::byte> out(body);
  cuda::detail::check(cudaMemcpy(in.p, x.data(), n * 4, cudaMemcpyHostToDevice), "upload");
  if (c == cpu_codec::bf16)
    cuda::bf16_encode(in.p, n, out.p);
  else
    cuda::int8_encode(in.p, n, out.p);
  std::vector<std::byte> host(body);
  cuda::detail::check(cudaMemcpy(host.data(), out.p, body, cudaMemcpyDeviceToHost), "download");
  return host;
}

std::vector<float> gpu_decode(cpu_codec c, const std::vector<std::byte>& body, std::size_t n) {
  device_buffer<std::byte> in(body.size());
  device_buffer<float> out(n);
  cuda::detail::check(cudaMemcpy(in.p, body.data(), body.size(), cudaMemcpyHostToDevice), "upload");
  if (c == cpu_codec::bf16)
    cuda::bf16_decode(in.p, n, out.p);
  else
    cuda::int8_decode(in.p, n, out.p);
  std::vector<float> host(n);
  cuda::detail::check(cudaMemcpy(host.data(), out.p, n * 4, cudaMemcpyDeviceToHost), "download");
  return host;
}

}  // namespace

TEST_CASE("GPU bf16 and int8 bodies are the CPU codecs' bodies, byte for byte, and decode to the same floats",
          "[cuda][codecs]") {
  for (const auto c : {cpu_codec::bf16, cpu_codec::int8})
    for (const std::size_t n : {std::size_t{1}, std::size_t{127}, std::size_t{128}, std::size_t{129}, std::size_t{1001},
                                std::size_t{1} << 20, (std::size_t{1} << 22) + 77}) {
      INFO((c == cpu_codec::bf16 ? "bf16" : "int8") << ", n = " << n);
      const auto x = gradient(n, static_cast<std::uint32_t>(n));
      const auto frame = trinity::testing::cpu_frame(c, x);
      const auto want = trinity::testing::body_of(frame);
      const auto got = gpu_body(c, x);
      REQUIRE(got.size() == want.size());
      std::size_t first = got.size();
      for (std::size_t i = 0; i < got.size() && first == got.size(); ++i)
        if (got[i] != want[i]) first = i;
      INFO("first differing byte " << first);
      CHECK(first == got.size());
      const auto cpu = trinity::testing::cpu_decode(frame);
      const auto gpu = gpu_decode(c, got, n);
      CHECK(std::memcmp(cpu.data(), gpu.data(), n * 4) == 0);
    }
}

TEST_CASE("an empty tensor launches nothing and leaves the stream clean", "[cuda][codecs]") {
  cuda::int8_encode(nullptr, 0, nullptr);
  cuda::bf16_decode(nullptr, 0, nullptr);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("tensors that do not start on a 16-byte boundary take the scalar path and give the same bytes",
          "[cuda][codecs]") {
  const std::size_t n = 1000;
  const auto x = gradient(n + 1, 7);
  const std::vector<float> tail(x.begin() + 1, x.end());
  device_buffer<float> in(n + 1);
  device_buffer<std::byte> out(4 * n + 16);
  device_buffer<float> back(n + 1);
  cuda::detail::check(cudaMemcpy(in.p, x.data(), (n + 1) * 4, cudaMemcpyHostToDevice), "upload");
  for (const auto c : {cpu_codec::bf16, cpu_codec::int8}) {
    INFO((c == cpu_codec::bf16 ? "bf16" : "int8"));
    const auto frame = trinity::testing::cpu_frame(c, tail);
    const auto want = trinity::testing::body_of(frame);
    // Input one float in; bf16's body 4 bytes in (4-aligned, not 8); decode into one float in.
    std::byte* body = out.p + (c == cpu_codec::bf16 ? 4 : 0);
    if (c == cpu_codec::bf16)
      cuda::bf16_encode(in.p + 1, n, body);
    else
      cuda::int8_encode(in.p + 1, n, body);
    std::vector<std::byte> got(want.size());
    cuda::detail::check(cudaMemcpy(got.data(), body, got.size(), cudaMemcpyDeviceToHost), "download");
    CHECK(got == want);
    if (c == cpu_codec::bf16)
      cuda::bf16_decode(body, n, back.p + 1);
    else
      cuda::int8_decode(body, n, back.p + 1);
    std::vector<float> decoded(n);
    cuda::detail::check(cudaMemcpy(decoded.data(), back.p + 1, n * 4, cudaMemcpyDeviceToHost), "download");
    const auto cpu = trinity::testing::cpu_decode(frame);
    CHECK(std::memcmp(cpu.data(), decoded.data(), n * 4) == 0);
  }
}
