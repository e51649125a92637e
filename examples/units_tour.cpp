// Strong units in five lines: sizes, rates and times that cannot be mixed up.
#include <trinity/units.hpp>

#include <iostream>

int main() {
  using namespace trinity::literals;
  const trinity::bytes gradient = 100_MB;
  for (const auto link : {1_Gbps, 10_Gbps, 100_Gbps, 400_Gbps}) {
    const trinity::seconds t = gradient / link + 2_us;  // α-β: latency plus size over bandwidth
    std::cout << "100 MB over " << link << ": " << t << '\n';
  }
  std::cout << "1 GiB is " << trinity::to_string(1_GiB) << " or " << trinity::to_string_iec(1_GiB) << '\n';
}
