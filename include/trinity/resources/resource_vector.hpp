#pragma once
//! \file
//! resource_vector: what one unit of work (a training step, an inference
//! request, a frame) costs in each of trinity's five resources. Every policy,
//! model and mechanism reports its cost as one of these, so a codec, a ZeRO
//! stage and a cache hit can be compared in the same units.
//!
//! `bandwidth` is counted as the bytes that cross links per unit of work; the
//! rate it needs follows by dividing by `time`.

#include <trinity/units/quantity.hpp>

namespace trinity {

struct resource_vector {
  flops compute{};    //!< arithmetic performed
  bytes bandwidth{};  //!< bytes sent over links
  bytes memory{};     //!< peak bytes resident
  joules energy{};    //!< energy spent
  seconds time{};     //!< wall-clock time

  friend constexpr bool operator==(const resource_vector&, const resource_vector&) = default;

  constexpr resource_vector& operator+=(const resource_vector& o) noexcept {
    compute += o.compute;
    bandwidth += o.bandwidth;
    memory += o.memory;
    energy += o.energy;
    time += o.time;
    return *this;
  }
  constexpr resource_vector& operator-=(const resource_vector& o) noexcept {
    compute -= o.compute;
    bandwidth -= o.bandwidth;
    memory -= o.memory;
    energy -= o.energy;
    time -= o.time;
    return *this;
  }
  friend constexpr resource_vector operator+(resource_vector a, const resource_vector& b) noexcept { return a += b; }
  friend constexpr resource_vector operator-(resource_vector a, const resource_vector& b) noexcept { return a -= b; }
  friend constexpr resource_vector operator*(resource_vector a, double f) noexcept {
    a.compute *= f;
    a.bandwidth *= f;
    a.memory *= f;
    a.energy *= f;
    a.time *= f;
    return a;
  }
  friend constexpr resource_vector operator*(double f, const resource_vector& a) noexcept { return a * f; }
};

//! Pareto dominance: a costs no more than b in every resource and less in one.
constexpr bool dominates(const resource_vector& a, const resource_vector& b) noexcept {
  const bool no_worse = a.compute <= b.compute && a.bandwidth <= b.bandwidth && a.memory <= b.memory &&
                        a.energy <= b.energy && a.time <= b.time;
  const bool better = a.compute < b.compute || a.bandwidth < b.bandwidth || a.memory < b.memory ||
                      a.energy < b.energy || a.time < b.time;
  return no_worse && better;
}

}  // namespace trinity
