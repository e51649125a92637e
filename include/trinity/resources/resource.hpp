#pragma once
//! \file
//! The five resources as types, so a policy can say at compile time what it
//! spends and what it saves (`using spends = resources::memory;`), and generic
//! code can read the matching component of a resource_vector.

#include <string_view>

#include <trinity/resources/resource_concept.hpp>
#include <trinity/resources/resource_vector.hpp>

namespace trinity::resources {

#define TRINITY_DETAIL_RESOURCE(id, member_type)                                     \
  struct id {                                                                        \
    using resource_concept = ::trinity::resource_tag;                                \
    using quantity = member_type;                                                    \
    static constexpr std::string_view name = #id;                                    \
    static constexpr quantity of(const resource_vector& v) noexcept { return v.id; } \
    static constexpr quantity& of(resource_vector& v) noexcept { return v.id; }      \
  };

TRINITY_DETAIL_RESOURCE(compute, flops)
TRINITY_DETAIL_RESOURCE(bandwidth, bytes)
TRINITY_DETAIL_RESOURCE(memory, bytes)
TRINITY_DETAIL_RESOURCE(energy, joules)
TRINITY_DETAIL_RESOURCE(time, seconds)

#undef TRINITY_DETAIL_RESOURCE

}  // namespace trinity::resources
