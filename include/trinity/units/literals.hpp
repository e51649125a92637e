#pragma once
//! \file
//! User-defined literals for every named quantity. Decimal prefixes are SI
//! (1_GB = 1e9 bytes), binary ones IEC (1_GiB = 2^30 bytes); network rates in
//! bits per second divide by eight (400_Gbps = 50e9 bytes per second).
//! `_TFLOP` is an amount of work; `_TFLOPs` (and `_TFLOPS`) a rate, as on
//! data sheets.
//!
//!   using namespace trinity::literals;
//!   auto t = 1_GiB / 64_GBps;   // trinity::seconds

#include <trinity/units/quantity.hpp>

namespace trinity::inline literals {

#define TRINITY_DETAIL_LITERAL(type, suffix, factor)                                                             \
  constexpr type operator""_##suffix(long double v) noexcept { return type{static_cast<double>(v) * (factor)}; } \
  constexpr type operator""_##suffix(unsigned long long v) noexcept { return type{static_cast<double>(v) * (factor)}; }

// sizes
TRINITY_DETAIL_LITERAL(bytes, B, 1.0)
TRINITY_DETAIL_LITERAL(bytes, kB, 1e3)
TRINITY_DETAIL_LITERAL(bytes, MB, 1e6)
TRINITY_DETAIL_LITERAL(bytes, GB, 1e9)
TRINITY_DETAIL_LITERAL(bytes, TB, 1e12)
TRINITY_DETAIL_LITERAL(bytes, PB, 1e15)
TRINITY_DETAIL_LITERAL(bytes, KiB, 1024.0)
TRINITY_DETAIL_LITERAL(bytes, MiB, 1024.0 * 1024.0)
TRINITY_DETAIL_LITERAL(bytes, GiB, 1024.0 * 1024.0 * 1024.0)
TRINITY_DETAIL_LITERAL(bytes, TiB, 1024.0 * 1024.0 * 1024.0 * 1024.0)

// times
TRINITY_DETAIL_LITERAL(seconds, ps, 1e-12)
TRINITY_DETAIL_LITERAL(seconds, ns, 1e-9)
TRINITY_DETAIL_LITERAL(seconds, us, 1e-6)
TRINITY_DETAIL_LITERAL(seconds, ms, 1e-3)
TRINITY_DETAIL_LITERAL(seconds, s, 1.0)

// bandwidth: bytes per second ...
TRINITY_DETAIL_LITERAL(bytes_per_second, Bps, 1.0)
TRINITY_DETAIL_LITERAL(bytes_per_second, MBps, 1e6)
TRINITY_DETAIL_LITERAL(bytes_per_second, GBps, 1e9)
TRINITY_DETAIL_LITERAL(bytes_per_second, TBps, 1e12)
// ... and bits per second, as network links are quoted
TRINITY_DETAIL_LITERAL(bytes_per_second, bps, 1.0 / 8)
TRINITY_DETAIL_LITERAL(bytes_per_second, Mbps, 1e6 / 8)
TRINITY_DETAIL_LITERAL(bytes_per_second, Gbps, 1e9 / 8)
TRINITY_DETAIL_LITERAL(bytes_per_second, Tbps, 1e12 / 8)

// work
TRINITY_DETAIL_LITERAL(flops, FLOP, 1.0)
TRINITY_DETAIL_LITERAL(flops, MFLOP, 1e6)
TRINITY_DETAIL_LITERAL(flops, GFLOP, 1e9)
TRINITY_DETAIL_LITERAL(flops, TFLOP, 1e12)
TRINITY_DETAIL_LITERAL(flops, PFLOP, 1e15)

// compute rate
TRINITY_DETAIL_LITERAL(flops_per_second, GFLOPs, 1e9)
TRINITY_DETAIL_LITERAL(flops_per_second, TFLOPs, 1e12)
TRINITY_DETAIL_LITERAL(flops_per_second, TFLOPS, 1e12)
TRINITY_DETAIL_LITERAL(flops_per_second, PFLOPs, 1e15)
TRINITY_DETAIL_LITERAL(flops_per_second, PFLOPS, 1e15)

// energy and power
TRINITY_DETAIL_LITERAL(joules, pJ, 1e-12)
TRINITY_DETAIL_LITERAL(joules, nJ, 1e-9)
TRINITY_DETAIL_LITERAL(joules, uJ, 1e-6)
TRINITY_DETAIL_LITERAL(joules, mJ, 1e-3)
TRINITY_DETAIL_LITERAL(joules, J, 1.0)
TRINITY_DETAIL_LITERAL(joules, kJ, 1e3)
TRINITY_DETAIL_LITERAL(joules, MJ, 1e6)
TRINITY_DETAIL_LITERAL(watts, mW, 1e-3)
TRINITY_DETAIL_LITERAL(watts, W, 1.0)
TRINITY_DETAIL_LITERAL(watts, kW, 1e3)
TRINITY_DETAIL_LITERAL(watts, MW, 1e6)
// energy per bit moved, as interconnect and DRAM efficiency is quoted
TRINITY_DETAIL_LITERAL(joules_per_byte, pJ_per_bit, 8e-12)

// the paper's video bandwidth (§3.1.2): bits per pixel, held as bytes per pixel
TRINITY_DETAIL_LITERAL(bits_per_pixel, bpp, 1.0 / 8)
TRINITY_DETAIL_LITERAL(pixels, px, 1.0)

#undef TRINITY_DETAIL_LITERAL

// clang-format 14 flags its own comment on an inline nested namespace as unformatted.
// clang-format off
}  // namespace trinity::inline literals
// clang-format on
