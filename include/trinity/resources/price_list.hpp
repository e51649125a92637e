#pragma once
//! \file
//! price_list: what a FLOP and a byte sent cost in time and energy on one
//! system. A trade stated in work (FLOPs computed, bytes sent, bytes held)
//! becomes a trade in time and energy too, so every component of a
//! resource_vector is priced.
//!
//!   trinity::price_list h100{989_TFLOPs, 700_W / 989_TFLOPs, 400_Gbps, 30_pJ_per_bit};
//!   auto t = trade.priced(h100);   // t.time_saved(), t.energy_saved()

#include <trinity/error.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

struct price_list {
  flops_per_second compute_rate;   //!< sustained rate of the device doing the work
  joules_per_flop compute_energy;  //!< energy per FLOP on that device
  bytes_per_second link_rate;      //!< rate of the link the traffic crosses
  joules_per_byte link_energy;     //!< energy per byte sent over it
  //! Whether compute and transfers overlap (time is the larger of the two) or
  //! run one after the other (time is their sum, an upper bound).
  bool overlap = false;
};

//! Throws invalid_input naming the field that cannot work.
constexpr void validate(const price_list& p) {
  detail::require(p.compute_rate > flops_per_second{} && detail::is_finite(p.compute_rate.value()), "compute_rate",
                  "must be positive and finite");
  detail::require(p.compute_energy >= joules_per_flop{} && detail::is_finite(p.compute_energy.value()),
                  "compute_energy", "must be finite and not negative");
  detail::require(p.link_rate > bytes_per_second{} && detail::is_finite(p.link_rate.value()), "link_rate",
                  "must be positive and finite");
  detail::require(p.link_energy >= joules_per_byte{} && detail::is_finite(p.link_energy.value()), "link_energy",
                  "must be finite and not negative");
}

//! Adds the time and energy that v's compute and traffic cost under p to the
//! time and energy v already carries. Memory held is charged nothing here: its
//! price is the capacity it occupies, which v.memory already states.
constexpr resource_vector priced(resource_vector v, const price_list& p) {
  validate(p);
  const seconds computing = v.compute / p.compute_rate;
  const seconds sending = v.bandwidth / p.link_rate;
  v.time += p.overlap ? units::max(computing, sending) : computing + sending;
  v.energy += v.compute * p.compute_energy + v.bandwidth * p.link_energy;
  return v;
}

}  // namespace trinity
