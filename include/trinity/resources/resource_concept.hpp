#pragma once
//! \file
//! Resource: one of the quantities a trade spends or saves (compute,
//! bandwidth, memory, energy, time). Built from named pieces so a failure
//! says which one is missing. It sits beside the resources it describes, so
//! resources/ needs nothing from concepts/ (<trinity/concepts/resource.hpp>
//! brings it too).

#include <concepts>
#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

//! Says `using resource_concept = trinity::resource_tag;`.
template <class R>
concept opts_into_resource = requires {
  typename R::resource_concept;
}
&&std::same_as<typename R::resource_concept, resource_tag>;

//! Has `static constexpr std::string_view name`.
template <class T>
concept names_itself = requires {
  { T::name } -> std::convertible_to<std::string_view>;
};

//! Reads its component of a resource_vector as a unit-typed quantity.
template <class R>
concept projects_resource_vector = requires(const resource_vector& v) {
  typename R::quantity;
  requires Quantity<typename R::quantity>;
  { R::of(v) } -> std::same_as<typename R::quantity>;
};

template <class R>
concept Resource = opts_into_resource<R> && names_itself<R> && projects_resource_vector<R>;

//! Fails to compile, with the fix in the message, unless R is a Resource.
template <class R>
consteval bool diagnose_resource() {
  static_assert(opts_into_resource<R>,
                "trinity: this type is not a Resource. Fix: use one of trinity::resources::compute, bandwidth, "
                "memory, energy or time (<trinity/resources/resource.hpp>), or add "
                "`using resource_concept = trinity::resource_tag;` to your own.");
  if constexpr (opts_into_resource<R>) {
    static_assert(names_itself<R>,
                  "trinity: a Resource names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(projects_resource_vector<R>,
                  "trinity: a Resource reads its part of a resource_vector. Fix: add `using quantity = <a trinity "
                  "quantity>;` and `static constexpr quantity of(const trinity::resource_vector&)`.");
  }
  return Resource<R>;
}

}  // namespace trinity
