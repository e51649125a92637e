// trinity::stream against raw ZeroMQ over TCP loopback, alternating in every iteration so both see the same
// machine: one producer thread sending `size`-byte samples to one consumer thread, as fast as both go. The
// raw pair is what a user would write (a DEALER sending to a ROUTER, a fresh message per sample, no
// acknowledgements, no ordering over streams, nothing kept for a restart); trinity adds its header, its
// window of samples kept until acknowledged, the acknowledgements and the in-order delivery.
// Counters: each side's samples/s and bytes/s, trinity's over raw's (the target is >= 0.9), and how many
// samples trinity's messages carried on average (small samples travel batched when the sender runs ahead).
#include <trinity/stream.hpp>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench_support.hpp"

namespace {

using namespace trinity;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

double raw_round(zmq::socket_t& in, zmq::socket_t& out, const std::vector<std::byte>& sample, std::int64_t count) {
  const auto t0 = clock_type::now();
  std::thread sender([&] {
    for (std::int64_t i = 0; i < count; ++i) {
      zmq::message_t m(sample.size());
      std::memcpy(m.data(), sample.data(), sample.size());
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
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double trinity_round(stream::consumer& in, stream::producer& out, const std::vector<std::byte>& sample,
                     std::int64_t count, benchmark::State& state) {
  const auto t0 = clock_type::now();
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
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void stream_vs_raw_zeromq(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto count = static_cast<std::int64_t>(
      std::max<std::size_t>(64, bench::sized<std::size_t>(std::size_t{1} << 28, 1 << 20) / size));
  const std::vector<std::byte> sample(size, std::byte{7});
  zmq::context_t context(1);
  zmq::socket_t raw_in(context, zmq::socket_type::router);
  raw_in.bind("tcp://127.0.0.1:*");
  zmq::socket_t raw_out(context, zmq::socket_type::dealer);
  raw_out.connect(raw_in.get(zmq::sockopt::last_endpoint));
  stream::consumer in(context, "tcp://127.0.0.1:*", {});
  stream::producer out(context, in.endpoint(), {.id = 1, .streams = 1});
  std::thread asker([&] { (void)out.resume_offset(); });
  while (!out.drain(0ms)) (void)in.next(10ms);  // the hello answered
  asker.join();
  double raw_s = 0, trinity_s = 0;
  for (auto _ : state) {
    raw_s += raw_round(raw_in, raw_out, sample, count);
    trinity_s += trinity_round(in, out, sample, count, state);
  }
  const double n = static_cast<double>(state.iterations()) * static_cast<double>(count);
  state.counters["raw_items_per_second"] = n / raw_s;
  state.counters["trinity_items_per_second"] = n / trinity_s;
  state.counters["raw_bytes_per_second"] = n * static_cast<double>(size) / raw_s;
  state.counters["trinity_bytes_per_second"] = n * static_cast<double>(size) / trinity_s;
  state.counters["trinity_over_raw"] = raw_s / trinity_s;
  const auto sent = out.stats();
  state.counters["samples_per_message"] =
      sent.messages > 0 ? static_cast<double>(sent.sent) / static_cast<double>(sent.messages) : 0.0;
}

BENCHMARK(stream_vs_raw_zeromq)
    ->ArgName("bytes")
    ->Arg(1024)
    ->Arg(65536)
    ->Arg(1048576)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return trinity::bench::run(argc, argv); }
