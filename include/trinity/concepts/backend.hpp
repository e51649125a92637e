#pragma once
//! \file
//! Deprecated in 0.2.0: this header moved to <trinity/backends/backend.hpp>. It forwards there, with a warning, for the
//! 0.2 releases and goes in 0.3.0 (CHANGELOG.md).
#pragma GCC warning \
    "<trinity/concepts/backend.hpp> is deprecated: include <trinity/backends/backend.hpp> (CHANGELOG.md, 0.2.0)"
#include <trinity/backends/backend.hpp>
