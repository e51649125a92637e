// Built against an installed trinity::compress by run.cmake: a chain round trip.
#include <trinity/compress.hpp>

#include <cstdio>
#include <vector>

// The installed headers carry the compile-time checks too.
static_assert(trinity::Compressor<trinity::compress::chain<trinity::compress::int8, trinity::compress::zstd<3>>>);

int main() {
  using namespace trinity::compress;
  std::vector<float> x(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) - 8.0f;
  chain<int8, zstd<3>> c;
  frame_buffer f;
  c.encode(x, f);
  const auto y = decode(f.bytes());
  const bool ok = y.size() == x.size() && y[8] == 0.0f && y[16] == 8.0f;
  std::printf("trinity::compress from an install: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
