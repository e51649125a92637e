// Top-k frames keep different indices on every rank: they cannot be summed hop by hop.
// expect: sparsifier's frames cannot be summed hop by hop.*Fix: use comm::compressed_gather
#include <trinity/comm/compressed.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/topk.hpp>

// Positive control: int8 on the ring and top-k on the gather are both fine.
static_assert(sizeof(trinity::comm::compressed_all_reduce<trinity::compress::int8, trinity::comm::compressed_ring>) > 0,
              "positive control failed");
static_assert(
    sizeof(trinity::comm::compressed_all_reduce<trinity::compress::topk<>, trinity::comm::compressed_gather>) > 0,
    "positive control failed");

int main() {
  trinity::comm::compressed_all_reduce<trinity::compress::topk<>, trinity::comm::compressed_ring> nonsense;
  (void)nonsense;
}
