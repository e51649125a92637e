#pragma once
//! \file
//! Umbrella for trinity/compress/: the compute -> bandwidth trade, every codec. The codecs that need no library
//! (casts, quantizers, QSGD, sign, top-k and DGC, PowerSGD, chains, error feedback), their frames and decoding
//! are in trinity::trinity; the lossless ones in compress/lossless/ (zstd, lz4, delta) are the trinity::compress
//! target, which links zstd and lz4, and so is this header, which includes them all and names them in the
//! catalog.
#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/cast.hpp>
#include <trinity/compress/catalog.hpp>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/compressor.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/dgc.hpp>
#include <trinity/compress/element.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/frame_decoders.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/lossless/catalog.hpp>
#include <trinity/compress/lossless/delta.hpp>
#include <trinity/compress/lossless/lz4.hpp>
#include <trinity/compress/lossless/zstd.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/sign.hpp>
#include <trinity/compress/sparse.hpp>
#include <trinity/compress/topk.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
