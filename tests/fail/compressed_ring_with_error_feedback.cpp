// error_feedback<int8> inside a compressed collective kept one error state across chunks of different hops
// (an outside user's wrong sums); the collective feeds back itself, so the wrapper is refused with the fix.
// expect: compressed_all_reduce feeds each rank's error back itself.*Fix: pass the codec itself
#include <trinity/comm/compressed.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/quantize.hpp>

using namespace trinity;

// Positive control: the plain codec is the spelling that works.
static_assert(sizeof(comm::compressed_all_reduce<compress::int8, comm::compressed_ring>) > 0,
              "positive control failed");

comm::compressed_all_reduce<compress::error_feedback<compress::int8>, comm::compressed_ring> wrong;
