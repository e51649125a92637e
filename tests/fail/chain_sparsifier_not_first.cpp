// A sparsifier after a quantizer would pick among quantized values.
// expect: a sparsifier \(topk, sampled_topk, dgc\) must come first in a chain
#include <trinity/compress/chain.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

static_assert(trinity::Compressor<trinity::compress::chain<trinity::compress::topk<>, trinity::compress::int8>>,
              "positive control failed");
trinity::compress::chain<trinity::compress::int8, trinity::compress::topk<>> bad;
