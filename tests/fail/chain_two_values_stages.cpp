// Quantizing already quantized values.
// expect: a chain takes at most one values stage
#include <trinity/compress/chain.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>

static_assert(trinity::Compressor<trinity::compress::chain<trinity::compress::int4>>, "positive control failed");
trinity::compress::chain<trinity::compress::int8, trinity::compress::qsgd<>> bad;
