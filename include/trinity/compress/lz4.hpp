#pragma once
//! \file
//! Deprecated in 0.2.0: this header moved to <trinity/compress/lossless/lz4.hpp> (trinity::compress). It forwards
//! there, with a warning, for the 0.2 releases and goes in 0.3.0 (CHANGELOG.md).
#pragma GCC warning \
    "<trinity/compress/lz4.hpp> is deprecated: include <trinity/compress/lossless/lz4.hpp> (CHANGELOG.md, 0.2.0)"
#include <trinity/compress/lossless/lz4.hpp>
