// A delta frame decodes only against the previous frame of its own stream.
// expect: delta codec's frames decode only against the previous frame.*Fix: compress gradients with a stateless codec
#include <trinity/comm/compressed.hpp>
#include <trinity/compress/lossless/delta.hpp>
#include <trinity/compress/lossless/zstd.hpp>

// Positive control: the lossless codec under the delta is fine on its own.
static_assert(sizeof(trinity::comm::compressed_all_reduce<trinity::compress::zstd<1>, trinity::comm::compressed_ring>) >
                  0,
              "positive control failed");

int main() {
  trinity::comm::compressed_all_reduce<trinity::compress::delta<>, trinity::comm::compressed_gather> nonsense;
  (void)nonsense;
}
