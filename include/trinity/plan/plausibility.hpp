#pragma once
//! \file
//! Whether a system's figures look like hardware: a device's dense rate and power, a tier's bandwidth and a
//! link's bandwidth, each against every preset of its kind (devices against device presets, a tier against the
//! tiers of its level, a link against the link presets). A figure more than 10x from every one of them, or a link
//! 8 times one of its family's and near none (bytes written for bits), is most likely a typo: "989GFLOPs" for
//! "989TFLOPs" plans a 57 ks step and still prints an MFU. Such a figure is reported, not changed: `trinity plan` warns
//! with the nearest preset, and `--strict` refuses it.
//!
//!   for (const auto& x : plan::implausible_figures(s)) std::cerr << x.field << ": " << x.message << '\n';

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/plan/device_presets.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! A figure no preset of its kind comes near.
struct implausible_figure {
  std::string field;    //!< its path in the system file: "device.compute", "scale_out.bandwidth"
  std::string message;  //!< what it is, the nearest preset and what to check
};

//! How far a figure may sit from the nearest preset of its kind before it is reported.
inline constexpr double plausible_factor = 10;

namespace detail {

//! A preset of the kind a figure is judged against: its name and its figure in base units.
struct known_figure {
  std::string name;
  double value = 0;
};

// The report for `value` against `known` (none: nothing to judge by), or empty when one is within 10x of it.
template <class Q>
std::string judged(Q value, const std::vector<known_figure>& known, std::string_view kind) {
  if (known.empty() || !(value.value() > 0)) return {};
  const known_figure* nearest = nullptr;
  double distance = 0;
  for (const auto& k : known) {
    const double d = std::abs(std::log(value.value() / k.value));
    if (!nearest || d < distance) nearest = &k, distance = d;
  }
  if (distance <= std::log(plausible_factor)) return {};
  return to_string(value) + " is more than 10x from every " + std::string(kind) +
         " preset's (the nearest: " + nearest->name + ", " + to_string(Q{nearest->value}) + "). Fix: check its unit";
}

// A link rate 8 times one of its family's (within 1%) and within 2x of none: "400GB/s" typed for an NDR port's
// "400Gb/s". Only upward: a slower port of the family (100 GbE against 800 GbE) is hardware, not a slip.
inline std::string bits_read_as_bytes(bytes_per_second value, const std::vector<known_figure>& family) {
  const known_figure* eighth = nullptr;
  for (const auto& k : family) {
    const double ratio = value.value() / k.value;
    if (ratio > 0.5 && ratio < 2) return {};
    if (std::abs(std::log(ratio / 8)) < 0.01) eighth = &k;
  }
  if (!eighth) return {};
  return to_string(value) + " is 8 times " + eighth->name + "'s " + to_string(bytes_per_second{eighth->value}) +
         ": a rate in bits written as bytes? (\"400Gbps\" is 50 GB/s)";
}

inline std::vector<known_figure> device_rates() {
  std::vector<known_figure> out;
  for (const auto n : presets::device_names())
    out.push_back({std::string(n), presets::find_device(n)->rate("bf16").value()});
  return out;
}
inline std::vector<known_figure> device_powers() {
  std::vector<known_figure> out;
  for (const auto n : presets::device_names()) out.push_back({std::string(n), presets::find_device(n)->power.value()});
  return out;
}
inline std::vector<known_figure> tier_rates(tier_level level) {
  std::vector<known_figure> out;
  for (const auto& t : preset_tiers)
    if (t.level == level) out.push_back({std::string(t.name), t.bandwidth.value()});
  return out;
}
inline std::vector<known_figure> link_rates(const priced_link* family_of = nullptr) {
  std::vector<known_figure> out;
  for (const auto& p : preset_links)
    if (!family_of || p.family == family_of->family) out.push_back({std::string(p.name), p.bandwidth.value()});
  return out;
}

// A link's rate: within 10x of some link preset, and not bits written as bytes for one of its family.
inline std::string judged_link(const priced_link& l) {
  const auto far = judged(l.bandwidth, link_rates(), "link");
  return far.empty() ? bits_read_as_bytes(l.bandwidth, link_rates(&l)) : far;
}

}  // namespace detail

//! Every figure of `s` no preset of its kind comes near, in the file's order.
inline std::vector<implausible_figure> implausible_figures(const system& s) {
  std::vector<implausible_figure> out;
  const auto note = [&](std::string field, std::string message) {
    if (!message.empty()) out.push_back({std::move(field), std::move(message)});
  };
  note("device.compute", detail::judged(s.device.rate("bf16"), detail::device_rates(), "device"));
  note("device.power", detail::judged(s.device.power, detail::device_powers(), "device"));
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    note("tiers[" + std::to_string(i) + "].bandwidth",
         detail::judged(s.tiers[i].bandwidth, detail::tier_rates(s.tiers[i].level),
                        std::string(to_string(s.tiers[i].level)) + " tier"));
  note("interconnect.bandwidth", detail::judged_link(s.interconnect));
  if (s.scale_out) note("scale_out.bandwidth", detail::judged_link(*s.scale_out));
  return out;
}

}  // namespace trinity::plan
