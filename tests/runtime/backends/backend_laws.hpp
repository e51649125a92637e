#pragma once
// The body every backend runs (CPU, simulated, CUDA): bytes go in through
// upload, move with copy, come back through download unchanged, and the
// backend's clock never runs backwards. Shared as a function so the CUDA test,
// compiled by nvcc in its own binary, runs exactly the same checks.

#include <catch2/catch.hpp>

#include <trinity/backends/backend.hpp>
#include <trinity/error.hpp>
#include <trinity/tiers/presets.hpp>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdint>
#include <numeric>
#include <vector>

namespace trinity::testing {

template <Backend B>
void check_round_trip(B& b) {
  constexpr std::size_t n = std::size_t{1} << 20;
  const bytes size{static_cast<double>(n * sizeof(std::uint32_t))};
  std::vector<std::uint32_t> host(n), back(n, 0);
  std::iota(host.begin(), host.end(), 7u);

  void* first = b.allocate(size, 256);
  void* second = b.allocate(size, 256);
  REQUIRE(reinterpret_cast<std::uintptr_t>(first) % 256 == 0);
  REQUIRE(reinterpret_cast<std::uintptr_t>(second) % 256 == 0);

  const seconds t0 = b.now();
  b.upload(first, host.data(), size);
  b.copy(second, first, size);
  b.download(back.data(), second, size);
  const seconds t1 = b.now();
  CHECK(std::equal(host.begin(), host.end(), back.begin()));
  CHECK(t1 >= t0);

  // Empty moves are allowed and touch nothing.
  b.upload(first, host.data(), bytes{});
  b.copy(second, first, bytes{});
  b.download(back.data(), second, bytes{});
  CHECK(b.now() >= t1);
  CHECK(back.front() == 7u);

  b.deallocate(first, size, 256);
  b.deallocate(second, size, 256);
}

}  // namespace trinity::testing

namespace trinity::testing {

//! Sizes that cannot be counted are refused by name, and nothing moves.
template <Backend B>
void check_refuses_impossible_sizes(B& b) {
  CHECK_THROWS_WITH(b.allocate(bytes{-1.0}, 64), "bytes: must be a finite, non-negative size");
  void* p = b.allocate(bytes{64.0}, 64);
  const seconds t = b.now();
  char host[64] = {};
  CHECK_THROWS_AS(b.upload(p, host, bytes{-8.0}), invalid_input);
  CHECK_THROWS_AS(b.copy(p, p, bytes{std::nan("")}), invalid_input);
  CHECK_THROWS_AS(b.download(host, p, bytes{-1.0}), invalid_input);
  if constexpr (B::name == "sim") {
    CHECK(b.now() == t);  // a refused transfer charges no simulated time
  }
  b.deallocate(p, bytes{64.0}, 64);
}

}  // namespace trinity::testing
