// trinity::stream against raw ZeroMQ in the same run, over TCP loopback: one producer thread sending
// `size`-byte samples to one consumer thread, as fast as both go. The raw pair is what a user would write
// (a DEALER sending to a ROUTER, a fresh message per sample, no acknowledgements, no ordering over
// streams, nothing kept for a restart); trinity adds its header, its window of samples kept until
// acknowledged, the acknowledgements and the in-order delivery. Counters: items/s (samples) and bytes/s.
#include <trinity/stream.hpp>

#include <cstring>
#include <thread>
#include <vector>

#include "bench_support.hpp"

namespace {

using namespace trinity;
using namespace std::chrono_literals;

void raw_zeromq(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto count = static_cast<std::int64_t>(std::max<std::size_t>(64, (std::size_t{256} << 20) / size / 8));
  zmq::context_t context(1);
  zmq::socket_t in(context, zmq::socket_type::router);
  in.bind("tcp://127.0.0.1:*");
  const auto endpoint = in.get(zmq::sockopt::last_endpoint);
  zmq::socket_t out(context, zmq::socket_type::dealer);
  out.connect(endpoint);
  const std::vector<std::byte> sample(size, std::byte{7});
  for (auto _ : state) {
    std::thread sender([&] {
      for (std::int64_t i = 0; i < count; ++i) {
        zmq::message_t m(size);
        std::memcpy(m.data(), sample.data(), size);
        (void)out.send(m, zmq::send_flags::none);
      }
    });
    zmq::message_t id, m;
    for (std::int64_t i = 0; i < count; ++i) {
      (void)in.recv(id);
      (void)in.recv(m);
      benchmark::DoNotOptimize(m.data());
    }
    sender.join();
  }
  state.SetItemsProcessed(state.iterations() * count);
  state.SetBytesProcessed(state.iterations() * count * static_cast<std::int64_t>(size));
}

void trinity_stream(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto streams = static_cast<std::size_t>(state.range(1));
  const auto count = static_cast<std::int64_t>(std::max<std::size_t>(64, (std::size_t{256} << 20) / size / 8));
  zmq::context_t context(1);
  stream::consumer in(context, "tcp://127.0.0.1:*", {});
  stream::producer out(context, in.endpoint(), {.id = 1, .streams = streams});
  const std::vector<std::byte> sample(size, std::byte{7});
  std::thread asker([&] { (void)out.resume_offset(); });
  while (in.stats().received == 0 && !out.drain(0ms)) (void)in.next(10ms);  // the hello answered
  asker.join();
  for (auto _ : state) {
    std::thread sender([&] {
      for (std::int64_t i = 0; i < count; ++i) out.send(sample);
    });
    for (std::int64_t i = 0; i < count; ++i) {
      auto s = in.next(60s);
      if (!s) {
        state.SkipWithError("a sample did not arrive within 60 s");
        break;
      }
      benchmark::DoNotOptimize(s->payload().data());
      in.ack(*s);
    }
    in.flush();
    sender.join();
  }
  state.SetItemsProcessed(state.iterations() * count);
  state.SetBytesProcessed(state.iterations() * count * static_cast<std::int64_t>(size));
}

void sizes(benchmark::internal::Benchmark* b, bool with_streams) {
  for (std::int64_t size : {1024, 65536, 1048576}) {
    if (with_streams)
      b->Args({size, 1});
    else
      b->Args({size});
  }
  b->ArgNames(with_streams ? std::vector<std::string>{"bytes", "streams"} : std::vector<std::string>{"bytes"});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(raw_zeromq)->Apply([](auto* b) { sizes(b, false); });
BENCHMARK(trinity_stream)->Apply([](auto* b) { sizes(b, true); });

}  // namespace

int main(int argc, char** argv) { return trinity::bench::run(argc, argv); }
