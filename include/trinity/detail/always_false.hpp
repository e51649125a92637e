#pragma once

namespace trinity::detail {

// A false that depends on a template parameter, so a static_assert in an
// overload that must never be chosen fires only when it is instantiated.
template <class...>
inline constexpr bool always_false = false;

}  // namespace trinity::detail
