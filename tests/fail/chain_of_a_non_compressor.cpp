// expect: this type is not a Compressor. Fix: add `using compressor_concept
#include <trinity/compress/chain.hpp>
#include <trinity/compress/quantize.hpp>

struct not_a_codec {};
static_assert(trinity::Compressor<trinity::compress::int8>, "positive control failed");
trinity::compress::chain<not_a_codec> bad;
