// trinity-stream: the two ends of a stream:: link as processes, and a demo that measures them.
//
//   trinity-stream consume --bind tcp://127.0.0.1:* --endpoint-file ep --journal acks --producers 2 --count 5000
//   trinity-stream produce --connect "$(cat ep)" --id 0 --count 5000 --streams 4 --stream-cap 50MB/s
//   trinity-stream check --journal acks --producers 2 --count 5000
//   trinity-stream demo --streams 1,2,4,8,16 --stream-cap 25MB/s --link 200MB/s
//
// Sample `offset` of producer `id` is a pure function of the two (its bytes and its size), so a producer
// that restarts makes the same samples again, the consumer checks every byte it is given, and the journal
// records each sample's hash as its tag: `check` proves every sample arrived once, intact.

#include <CLI/CLI.hpp>

#include "../cli_values.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <trinity/detail/output_file.hpp>
#include <trinity/detail/printable.hpp>
#include <trinity/detail/splitmix.hpp>
#include <trinity/model/hetero.hpp>
#include <trinity/stream.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/parse.hpp>

extern char** environ;

namespace {

using namespace trinity;
using namespace std::chrono_literals;

using trinity::detail::splitmix64;

// Sample `offset` of producer `id`: `size` bytes (size 0: a size of its own, 64 B to 8 KiB).
std::vector<std::byte> make_sample(std::uint32_t id, std::uint64_t offset, std::size_t size) {
  const std::uint64_t seed = splitmix64((static_cast<std::uint64_t>(id) << 40) ^ offset);
  const std::size_t n = size ? size : 64 + seed % 8129;
  std::vector<std::byte> b(n);
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < n; i += 8) {
    x = splitmix64(x);
    std::memcpy(b.data() + i, &x, std::min<std::size_t>(8, n - i));
  }
  return b;
}

std::uint64_t hash_of(std::span<const std::byte> b) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ b.size();
  std::size_t i = 0;
  for (; i + 8 <= b.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b.data() + i, 8);
    h = splitmix64(h ^ w);
  }
  for (; i < b.size(); ++i) h = splitmix64(h ^ static_cast<std::uint64_t>(b[i]));
  return h;
}

struct produce_args {
  std::string connect;
  std::uint32_t id = 0;
  std::uint64_t count = 1000;
  std::string size = "0B";
  std::size_t streams = 1;
  std::string stream_cap = "0B/s";
  std::size_t window = 1024;
};

// A sample's bytes: 0 (each its own size) or up to 64 MiB, as --size gives them.
std::size_t sample_size(const std::string& text, const char* flag) {
  const auto size = parse<bytes>(text, flag);
  trinity::detail::require(
      size.value() >= 0 && size.value() <= 64.0 * 1024 * 1024 && std::floor(size.value()) == size.value(), flag,
      "must be a whole number of bytes from 0 (each sample its own size) to 64 MiB");
  return static_cast<std::size_t>(size.value());
}

int produce(const produce_args& a) {
  const auto size = sample_size(a.size, "--size");
  zmq::context_t context(1);
  stream::producer out(context, a.connect,
                       {.id = a.id,
                        .streams = a.streams,
                        .stream_cap = parse<bytes_per_second>(a.stream_cap, "--stream-cap"),
                        .window = a.window});
  const auto from = out.resume_offset();
  std::printf("producer %u resumes at offset %llu\n", a.id, static_cast<unsigned long long>(from));
  std::fflush(stdout);
  for (std::uint64_t o = from; o < a.count; ++o) out.send(make_sample(a.id, o, size));
  if (!out.drain(std::chrono::minutes(5))) {
    std::fprintf(stderr, "producer %u: the consumer did not acknowledge everything within 5 minutes\n", a.id);
    return 1;
  }
  const auto st = out.stats();
  std::printf("producer %u sent %llu frames (%llu again), the consumer restarted %llu times\n", a.id,
              static_cast<unsigned long long>(st.sent), static_cast<unsigned long long>(st.resent),
              static_cast<unsigned long long>(st.consumer_restarts));
  return 0;
}

struct consume_args {
  std::string bind = "tcp://127.0.0.1:*";
  std::string endpoint_file;
  std::string journal;
  std::uint32_t producers = 1;
  std::uint64_t count = 1000;
  std::string size = "0B";
  std::size_t window = 1024;
};

int consume(const consume_args& a) {
  const auto size = sample_size(a.size, "--size");
  if (!a.endpoint_file.empty()) trinity::detail::require_output_file("--endpoint-file", a.endpoint_file);
  zmq::context_t context(1);
  stream::consumer_options o{.window = a.window};
  if (!a.journal.empty()) o.journal = a.journal;
  stream::consumer in(context, a.bind, o);
  if (!a.endpoint_file.empty()) {
    // Written whole, then renamed: a reader never sees half an endpoint, and a write that fails says so.
    trinity::detail::write_output_file("--endpoint-file", a.endpoint_file, in.endpoint() + "\n");
  }
  std::printf("consumer bound %s\n", in.endpoint().c_str());
  std::fflush(stdout);
  auto done = [&] {
    for (std::uint32_t p = 0; p < a.producers; ++p)
      if (in.acked(p) < a.count) return false;
    return true;
  };
  while (!done()) {
    auto s = in.next(1s);
    if (!s) continue;
    if (s->producer() >= a.producers || s->offset() >= a.count) {
      std::fprintf(stderr, "consumer: a sample from producer %u offset %llu was not expected\n", s->producer(),
                   static_cast<unsigned long long>(s->offset()));
      return 1;
    }
    const auto want = make_sample(s->producer(), s->offset(), size);
    if (!std::equal(want.begin(), want.end(), s->payload().begin(), s->payload().end())) {
      std::fprintf(stderr, "consumer: producer %u offset %llu arrived corrupt\n", s->producer(),
                   static_cast<unsigned long long>(s->offset()));
      return 1;
    }
    in.ack(*s, hash_of(s->payload()));
  }
  in.flush();
  const auto& st = in.stats();
  // Linger so the producers hear the last acknowledgements (they ask after a silence).
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) (void)in.next(100ms);
  std::printf("consumer took %llu samples (%llu duplicates dropped, %llu malformed), most in hand %zu\n",
              static_cast<unsigned long long>(st.received), static_cast<unsigned long long>(st.duplicates),
              static_cast<unsigned long long>(st.malformed), st.max_in_hand);
  return st.stale_journal == 0 ? 0 : 1;
}

struct check_args {
  std::string journal;
  std::uint32_t producers = 1;
  std::uint64_t count = 1000;
  std::string size = "0B";
};

int check(const check_args& a) {
  const auto size = sample_size(a.size, "--size");
  const auto records = stream::ack_journal::read(a.journal);
  std::map<std::uint32_t, std::uint64_t> next;
  for (const auto& r : records) {
    // ack_journal::read already refuses a repeat or a gap; here the tag must be the hash of the true sample.
    if (r.producer >= a.producers || r.offset >= a.count || r.tag != hash_of(make_sample(r.producer, r.offset, size))) {
      std::fprintf(stderr, "check: record for producer %u offset %llu is wrong\n", r.producer,
                   static_cast<unsigned long long>(r.offset));
      return 1;
    }
    ++next[r.producer];
  }
  for (std::uint32_t p = 0; p < a.producers; ++p)
    if (next[p] != a.count) {
      std::fprintf(stderr, "check: producer %u has %llu of %llu samples acknowledged\n", p,
                   static_cast<unsigned long long>(next[p]), static_cast<unsigned long long>(a.count));
      return 1;
    }
  std::printf("every sample of %u producers acknowledged once, in order, intact: %zu records\n", a.producers,
              records.size());
  return 0;
}

struct demo_args {
  std::vector<std::size_t> streams = {1, 2, 4, 8, 16};
  std::string stream_cap = "25MB/s";
  std::string link = "200MB/s";
  std::string sample = "256KiB";
  double seconds = 2.0;
};

// Starts `self produce ...` as a process of its own.
pid_t spawn_producer(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  // Its own lines would break the table: its output goes nowhere.
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &quiet, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&quiet);
  if (rc != 0) throw stream::stream_error(std::string("cannot start a producer process: ") + std::strerror(rc));
  return pid;
}

int demo(const demo_args& a) {
  const auto cap = parse<bytes_per_second>(a.stream_cap, "--stream-cap");
  const auto link = parse<bytes_per_second>(a.link, "--link");
  const auto sample = bytes{static_cast<double>(sample_size(a.sample, "--sample"))};
  trinity::detail::require(sample.value() >= 1, "--sample", "must be at least 1 B");
  trinity::detail::require(a.seconds >= 0.5 && a.seconds <= 600, "--seconds",
                           "must be from 0.5 to 600 (a stream count)");
  trinity::detail::require(!a.streams.empty() && a.streams.size() <= 32, "--streams",
                           "give from 1 to 32 stream counts");
  for (const auto n : a.streams)
    trinity::detail::require(n >= 1 && n <= 256, "--streams", "each stream count must be from 1 to 256");
  std::printf("One producer process, N streams of %s each, over a link of %s (the consumer's), %s samples.\n",
              units::to_string(cap).c_str(), units::to_string(link).c_str(), units::to_string(sample).c_str());
  std::printf("| streams | predicted | measured | measured / predicted |\n|---|---|---|---|\n");
  for (std::size_t n : a.streams) {
    zmq::context_t context(1);
    stream::consumer in(context, "tcp://127.0.0.1:*", {.window = 256, .link_cap = link});
    const pid_t pid = spawn_producer({"trinity-stream", "produce", "--connect", in.endpoint(), "--id", "0", "--count",
                                      "1000000000", "--size", std::to_string(sample.value()) + "B", "--streams",
                                      std::to_string(n), "--stream-cap", a.stream_cap});
    // A quarter of the time to reach a steady state, then measure.
    const auto start = std::chrono::steady_clock::now();
    const auto warm = start + std::chrono::duration<double>(a.seconds / 4);
    const auto end = start + std::chrono::duration<double>(a.seconds);
    std::uint64_t bytes_in = 0;
    bool measuring = false;
    auto t0 = warm;
    for (auto now = start; now < end; now = std::chrono::steady_clock::now()) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid)  // the producer left early: its refusal, not a measurement
        throw stream::stream_error("the producer process ended early (" +
                                   std::string(WIFSIGNALED(status)
                                                   ? "signal " + std::to_string(WTERMSIG(status))
                                                   : "exit code " + std::to_string(WEXITSTATUS(status))) +
                                   "); run `trinity-stream produce` alone to see why");
      auto s = in.next(20ms);
      if (!measuring && std::chrono::steady_clock::now() >= warm) {
        measuring = true;
        t0 = std::chrono::steady_clock::now();
      }
      if (!s) continue;
      if (measuring) bytes_in += s->payload().size();
      in.ack(*s);
    }
    const double measured =
        static_cast<double>(bytes_in) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    const auto predicted = model::carried(model::stream_link{link, n, cap});
    std::printf("| %zu | %s | %s | %.3f |\n", n, units::to_string(predicted).c_str(),
                units::to_string(bytes_per_second(measured)).c_str(), measured / predicted.value());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trinity-stream: producer and consumer processes over trinity::stream (ZeroMQ)"};
  app.require_subcommand(1);

  produce_args p;
  auto* pc = app.add_subcommand("produce", "send samples to a consumer, resuming where it stands");
  pc->add_option("--connect", p.connect, "the consumer's endpoint, e.g. tcp://127.0.0.1:5555")->required();
  pc->add_option("--id", p.id, "this producer's id (the same across its restarts)");
  pc->add_option("--count", p.count, "samples to send in all (offsets 0 to count-1), at most 10^12")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1'000'000'000'000}));
  pc->add_option("--size", p.size, "bytes per sample (0B: each its own, 64 B to 8 KiB)");
  pc->add_option("--streams", p.streams, "parallel streams")->check(CLI::Range(1, 256));
  pc->add_option("--stream-cap", p.stream_cap, "each stream's most, e.g. 50MB/s (0B/s: uncapped)");
  pc->add_option("--window", p.window, "most unacknowledged samples, from 1 to 2^20")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));

  consume_args c;
  auto* cc = app.add_subcommand("consume", "take samples until every producer's count is acknowledged");
  cc->add_option("--bind", c.bind, "endpoint to bind (port * picks a free one)");
  cc->add_option("--endpoint-file", c.endpoint_file, "write the bound endpoint here");
  cc->add_option("--journal", c.journal, "the acknowledgement journal (resume from it after a restart)");
  cc->add_option("--producers", c.producers, "producer ids 0 to producers-1, at most 65536")
      ->check(CLI::Range(1u, 65536u));
  cc->add_option("--count", c.count, "samples per producer, at most 10^12")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1'000'000'000'000}));
  cc->add_option("--size", c.size, "bytes per sample, as the producers were given");
  cc->add_option("--window", c.window, "most samples of a producer in hand, from 1 to 2^20")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));

  check_args k;
  auto* kc = app.add_subcommand("check", "prove a journal holds every sample once, in order, with its true hash");
  kc->add_option("--journal", k.journal, "the consumer's journal")->required();
  kc->add_option("--producers", k.producers, "producer ids 0 to producers-1, at most 65536")
      ->check(CLI::Range(1u, 65536u));
  kc->add_option("--count", k.count, "samples per producer, at most 10^12")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1'000'000'000'000}));
  kc->add_option("--size", k.size, "bytes per sample, as the producers were given");

  demo_args d;
  auto* dc = app.add_subcommand("demo", "throughput against stream count, measured beside model/hetero.hpp");
  dc->add_option("--streams", d.streams, "stream counts to run, each from 1 to 256, at most 32 of them")
      ->delimiter(',');
  dc->add_option("--stream-cap", d.stream_cap, "each stream's cap (a sending thread's limit)");
  dc->add_option("--link", d.link, "the link's bandwidth (held by the consumer)");
  dc->add_option("--sample", d.sample, "bytes per sample, from 1 B to 64 MiB");
  dc->add_option("--seconds", d.seconds, "time per stream count, from 0.5 to 600");

  trinity::cli::refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a ParseError that exits 0; every other one is a refusal: exit code 2, as `trinity`.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    const int rc = *pc ? produce(p) : *cc ? consume(c) : *kc ? check(k) : demo(d);
    // What it printed reached its destination: a full disk behind a redirect is a failed run.
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw stream::stream_error("the output could not be written: standard output is full or closed");
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trinity-stream: %s\n", trinity::detail::printable(e.what()).c_str());
    return 2;
  }
}
