// Feedback of one stage's error inside a chain misses the sparsifier's.
// expect: Fix: wrap the whole chain, error_feedback<chain<...>>
#include <trinity/compress/chain.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

static_assert(trinity::Compressor<trinity::compress::error_feedback<
                  trinity::compress::chain<trinity::compress::topk<>, trinity::compress::int8>>>,
              "positive control failed");
trinity::compress::chain<trinity::compress::topk<>, trinity::compress::error_feedback<trinity::compress::int8>> bad;
