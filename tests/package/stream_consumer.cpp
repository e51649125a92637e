// Built against an installed trinity::stream by run.cmake: three samples from a producer to a consumer, in order.
#include <trinity/stream.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "expect.hpp"

int main() {
  zmq::context_t context(1);
  trinity::stream::consumer in(context, "tcp://127.0.0.1:*", {});
  const char* words[] = {"one", "two", "three"};
  bool drained = false;
  // The producer waits for the consumer's answer, which next() gives: it runs beside it, as in practice.
  std::thread sender([&, endpoint = in.endpoint()] {
    trinity::stream::producer out(context, endpoint, {.id = 4, .streams = 2});
    for (const char* w : words) out.send(std::as_bytes(std::span(w, std::strlen(w))));
    drained = out.drain(std::chrono::seconds(10));
  });
  bool in_order = true;
  for (unsigned i = 0; i < 3; ++i) {
    auto s = in.next(std::chrono::seconds(10));
    in_order = in_order && s && s->producer() == 4 && s->offset() == i &&
               s->payload().size() == std::strlen(words[i]) &&
               std::memcmp(s->payload().data(), words[i], s->payload().size()) == 0;
    if (s) in.ack(*s);
  }
  in.flush();
  while (in.next(std::chrono::milliseconds(300))) {
  }
  sender.join();
  std::printf("trinity::stream from an install:\n");
  EXPECT(in_order, "three samples arrive in order, each once");
  EXPECT(drained, "the producer hears every acknowledgement");
  return consumer::verdict();
}
