// A quantizer cannot read zstd's compressed bytes as floats.
// expect: a values stage cannot follow a lossless byte stage
#include <trinity/compress/chain.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/lossless/zstd.hpp>

static_assert(trinity::Compressor<trinity::compress::chain<trinity::compress::int8, trinity::compress::zstd<>>>,
              "positive control failed");
trinity::compress::chain<trinity::compress::zstd<>, trinity::compress::int8> bad;
