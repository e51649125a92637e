// Low rank needs the dense matrix, which a sparsifier has thrown away.
// expect: powersgd and delta need the dense tensor
#include <trinity/compress/chain.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

static_assert(trinity::Compressor<trinity::compress::chain<trinity::compress::topk<>, trinity::compress::int4>>,
              "positive control failed");
trinity::compress::chain<trinity::compress::topk<>, trinity::compress::powersgd<>> bad;
