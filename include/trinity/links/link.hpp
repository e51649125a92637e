#pragma once
//! \file
//! Link: a type that names an interconnect and describes it.
//!
//!   struct my_link {
//!     using link_concept = trinity::link_tag;
//!     static constexpr trinity::link_descriptor descriptor{ ... };
//!   };

#include <concepts>

#include <trinity/opt_in.hpp>
#include <trinity/links/link_descriptor.hpp>

namespace trinity {

//! Says `using link_concept = trinity::link_tag;`.
template <class L>
concept opts_into_link = requires {
  typename L::link_concept;
}
&&std::same_as<typename L::link_concept, link_tag>;

//! Has `static constexpr trinity::link_descriptor descriptor`.
template <class L>
concept describes_link = requires {
  { L::descriptor } -> std::convertible_to<const link_descriptor&>;
}
&&std::same_as<std::remove_cvref_t<decltype(L::descriptor)>, link_descriptor>;

template <class L>
concept Link = opts_into_link<L> && describes_link<L>;

//! Fails to compile, with the fix in the message, unless L is a Link.
template <class L>
consteval bool diagnose_link() {
  static_assert(opts_into_link<L>,
                "trinity: this type is not a Link. Fix: add `using link_concept = trinity::link_tag;` and "
                "`static constexpr trinity::link_descriptor descriptor{...};`, or use a preset from "
                "<trinity/links/presets.hpp> such as trinity::links::nvlink5.");
  if constexpr (opts_into_link<L>) {
    static_assert(describes_link<L>,
                  "trinity: this type opts into Link but has no `static constexpr trinity::link_descriptor "
                  "descriptor`. Fix: add one with the link's bandwidth per direction, latency and flit size.");
  }
  return Link<L>;
}

}  // namespace trinity
