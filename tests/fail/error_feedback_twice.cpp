// DGC already accumulates what it does not send.
// expect: already feeds its error back
#include <trinity/compress/dgc.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/sign.hpp>

static_assert(trinity::Compressor<trinity::compress::error_feedback<trinity::compress::sign<>>>,
              "positive control failed");
trinity::compress::error_feedback<trinity::compress::dgc<>> bad;
