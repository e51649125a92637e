#pragma once
//! \file
//! Single modules a layer runs again in its backward pass instead of keeping their outputs, beside the layout's
//! recomputation policy: Megatron-Core's --recompute-modules, which the performance recipes of mixtures use
//! (DeepSeek-V3's mla_up_proj, GPT-OSS's layernorm and moe_act). Each trades its outputs' memory for a second
//! forward of the module:
//!  - layernorm: the two norms before attention and the MLP (their outputs are the next GEMMs' inputs);
//!  - moe_act: the experts' activation function (its output is fc2's input, a row per token and expert);
//!  - mla_up_proj: latent attention's query and key-value up-projections (their outputs are Q, K and V);
//!  - mlp: a dense layer's whole MLP, from its input (DeepSeek-V3's first dense layers in its H100 recipe);
//!  - moe: a mixture's whole block, router, dispatch, experts, shared experts and combine, from its input;
//!  - shared_experts: a mixture's shared experts, from their input.
//! The first three drop only their outputs; the last three keep their input and drop everything inside, as
//! Megatron-Core checkpoints them. Written `layernorm+moe_act` in a layout (`recompute_modules=`); `none` for
//! none.

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace trinity::model {

enum class recompute_module : unsigned {
  layernorm = 1u,
  moe_act = 2u,
  mla_up_proj = 4u,
  mlp = 8u,
  moe = 16u,
  shared_experts = 32u
};

//! The modules' names, in the order a layout writes them.
inline constexpr std::array<std::pair<std::string_view, recompute_module>, 6> recompute_module_names{{
    {"layernorm", recompute_module::layernorm},
    {"moe_act", recompute_module::moe_act},
    {"mla_up_proj", recompute_module::mla_up_proj},
    {"mlp", recompute_module::mlp},
    {"moe", recompute_module::moe},
    {"shared_experts", recompute_module::shared_experts},
}};

//! A set of modules.
struct recompute_modules {
  unsigned bits = 0;
  [[nodiscard]] constexpr bool has(recompute_module m) const noexcept { return (bits & static_cast<unsigned>(m)) != 0; }
  constexpr void add(recompute_module m) noexcept { bits |= static_cast<unsigned>(m); }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits == 0; }
  friend constexpr bool operator==(recompute_modules, recompute_modules) = default;
};

//! `layernorm+moe_act`, or `none`.
inline std::string to_string(recompute_modules s) {
  std::string out;
  for (const auto& [name, m] : recompute_module_names)
    if (s.has(m)) {
      // Appended piece by piece: `"+" + std::string(name)` sets off GCC 12's false -Wrestrict in a user's -Wall build.
      if (!out.empty()) out += '+';
      out += name;
    }
  return out.empty() ? "none" : out;
}

}  // namespace trinity::model
