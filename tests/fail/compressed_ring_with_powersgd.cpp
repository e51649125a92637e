// PowerSGD's P·Qᵀ is bilinear: two ranks' frames do not add up to the frame of the sum.
// expect: cannot be summed hop by hop \(PowerSGD.*Fix: use comm::compressed_gather
#include <trinity/comm/compressed.hpp>
#include <trinity/compress/powersgd.hpp>

// Positive control: gathered and decoded one by one, PowerSGD is fine.
static_assert(
    sizeof(trinity::comm::compressed_all_reduce<trinity::compress::powersgd<2>, trinity::comm::compressed_gather>) > 0,
    "positive control failed");

int main() {
  trinity::comm::compressed_all_reduce<trinity::compress::powersgd<2>, trinity::comm::compressed_ring> nonsense;
  (void)nonsense;
}
