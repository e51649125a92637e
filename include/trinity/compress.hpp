#pragma once
//! \file
//! Umbrella for trinity/compress/: the compute -> bandwidth trade. Part of the
//! trinity::compress target (it links zstd and lz4), so trinity.hpp does not
//! include it.
#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/cast.hpp>
#include <trinity/compress/catalog.hpp>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/delta.hpp>
#include <trinity/compress/dgc.hpp>
#include <trinity/compress/element.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/lz4.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/sign.hpp>
#include <trinity/compress/sparse.hpp>
#include <trinity/compress/topk.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/compress/zstd.hpp>
#include <trinity/concepts/compressor.hpp>
