#pragma once
//! \file
//! A profile written by `trinity calibrate --out`, read strictly: the codecs
//! measured on a machine (what the chooser and the planner price), and the
//! machine itself (what `trinity verify` prices a step with).
//!
//!   {"trinity_profile": 1,
//!    "calibration": {"size_bytes": 16777216, "repeats": 3, "data": "N(0,1) fp32", "build": "...", "cpu": "..."},
//!    "compressors": [{"name": "int8-ef", "ratio": 3.88, "encode_rate_Bps": 1.1e10, "decode_rate_Bps": 1.4e10,
//!                     "relative_error": 0.0065, "lossless": false, "gathered": false}, ...],
//!    "machine": {"dense_flops_per_second": 2e10, "thread_link": {"latency_s": 2e-6, "bandwidth_Bps": 5e9},
//!                "cores": 2}}

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::io {

//! What calibrate measures of the machine beside its codecs.
struct machine_profile {
  flops_per_second dense{};      //!< one thread's rate on trinity-train's dense layers
  seconds latency{};             //!< one exchange between two thread ranks, empty message
  bytes_per_second bandwidth{};  //!< bytes per second of an exchange's copy, beyond its latency
  unsigned cores = 1;            //!< hardware threads: ranks beyond these share them
};

struct profile {
  std::vector<model::compressor_cost> compressors;
  std::optional<machine_profile> machine;
  std::string build, cpu;  //!< how the measuring program was compiled, and on what (when recorded)
};

namespace detail {
inline constexpr key profile_keys[] = {{"trinity_profile"}, {"calibration"}, {"compressors", required}, {"machine"}};
inline constexpr key calibration_keys[] = {{"size_bytes"}, {"repeats"}, {"data"}, {"build"}, {"cpu"}};
inline constexpr key cost_keys[] = {{"name", required},
                                    {"ratio", required},
                                    {"encode_rate_Bps", required},
                                    {"decode_rate_Bps", required},
                                    {"relative_error", required},
                                    {"lossless"},
                                    {"gathered"}};
inline constexpr key machine_keys[] = {
    {"dense_flops_per_second", required}, {"thread_link", required}, {"cores", required}};
inline constexpr key thread_link_keys[] = {{"latency_s", required}, {"bandwidth_Bps", required}};

inline double positive(const object& o, std::string_view k) {
  const double v = o.number(k);
  if (!(v > 0)) fail(o.path(k), "must be positive");
  return v;
}
}  // namespace detail

//! `gathered_by_name` answers for a codec whose entry predates the "gathered" key (its frames cannot be
//! summed hop by hop, so an all-reduce gathers them); without it such an entry is taken as summable.
inline profile read_profile(const json& j, const std::function<bool(std::string_view)>& gathered_by_name = {}) {
  const object o(j, "", detail::profile_keys, "a profile (write one with `trinity calibrate --out`)");
  profile p;
  if (o.has("trinity_profile") && o.count("trinity_profile") != 1)
    fail("trinity_profile", "version " + o.at("trinity_profile").dump() + " is not 1; re-run trinity calibrate");
  if (o.has("calibration")) {
    const object c(o.at("calibration"), "calibration", detail::calibration_keys, "the calibration's settings");
    if (c.has("size_bytes")) (void)c.count("size_bytes");
    if (c.has("repeats")) (void)c.count("repeats");
    if (c.has("data")) (void)c.text("data");
    c.get("build", p.build);
    c.get("cpu", p.cpu);
  }
  for_each(
      o.at("compressors"), "compressors",
      [&](const json& e, const std::string& at) {
        const object c(e, at, detail::cost_keys, "a compressor's cost");
        model::compressor_cost cost;
        cost.name = c.text("name");
        cost.ratio = c.number("ratio");
        cost.encode_rate = bytes_per_second{c.number("encode_rate_Bps")};
        cost.decode_rate = bytes_per_second{c.number("decode_rate_Bps")};
        cost.relative_error = c.number("relative_error");
        cost.lossless = false;
        c.get("lossless", cost.lossless);
        if (c.has("gathered"))
          cost.gathered = c.boolean("gathered");
        else if (gathered_by_name)
          cost.gathered = gathered_by_name(cost.name);
        try {
          model::validate(cost);
        } catch (const invalid_input& x) {
          // validate names "<codec>.<field>"; the file's path is the entry's.
          const auto dot = x.field().find('.');
          fail(dot == std::string::npos ? at : join(at, x.field().substr(dot + 1)), x.problem());
        }
        p.compressors.push_back(std::move(cost));
      },
      4096);
  if (o.has("machine")) {
    const object m(o.at("machine"), "machine", detail::machine_keys, "the machine's measurements");
    const object l(m.at("thread_link"), m.path("thread_link"), detail::thread_link_keys, "the thread link's α-β");
    machine_profile x;
    x.dense = flops_per_second{detail::positive(m, "dense_flops_per_second")};
    x.latency = seconds{detail::positive(l, "latency_s")};
    x.bandwidth = bytes_per_second{detail::positive(l, "bandwidth_Bps")};
    x.cores = static_cast<unsigned>(m.count("cores", 1u << 20));
    if (x.cores == 0) fail("machine.cores", "must be at least 1");
    p.machine = x;
  }
  return p;
}

}  // namespace trinity::io
