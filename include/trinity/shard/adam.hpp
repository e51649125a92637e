#pragma once
//! \file
//! Adam (Kingma & Ba, 2015) over a flat span, element by element, so the same
//! update on a shard or on the whole tensor gives the same bits: the property
//! that makes ZeRO's stages interchangeable. Two fp32 states per parameter,
//! stored as planes (all first moments, then all second moments), so a
//! range of parameters cuts its states with the same comm::partition.
//! Build with -ffp-contract=off where stages must agree bit for bit: a fused
//! multiply-add in the vector body but not in the scalar tail would make the
//! bits depend on where a shard starts.

#include <cmath>
#include <cstddef>
#include <span>

#include <trinity/error.hpp>

namespace trinity::shard {

struct adam {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;

  //! Floats of optimizer state per parameter.
  static constexpr std::size_t states_per_parameter = 2;

  //! One step (t counts from 1) on params, with grads and this range's states: [m | v], 2 per parameter.
  void update(std::span<float> params, std::span<const float> grads, std::span<float> states, long step) const {
    trinity::detail::require(grads.size() == params.size() && states.size() == 2 * params.size(), "states",
                             "adam needs one gradient and two states per parameter");
    trinity::detail::require(step >= 1, "step", "counts from 1");
    const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
    const auto step_size = static_cast<float>(learning_rate / bc1);
    const auto root_bc2 = static_cast<float>(std::sqrt(bc2));
    const std::size_t n = params.size();
    for (std::size_t i = 0; i < n; ++i) {
      float& m = states[i];
      float& v = states[n + i];
      const float g = grads[i];
      m = beta1 * m + (1.0f - beta1) * g;
      v = beta2 * v + (1.0f - beta2) * g * g;
      params[i] -= step_size * m / (std::sqrt(v) / root_bc2 + epsilon);
    }
  }
};

}  // namespace trinity::shard
