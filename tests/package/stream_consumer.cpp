// Built against an installed trinity::stream by run.cmake: three samples from a producer to a consumer, in order.
#include <trinity/stream.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "expect.hpp"

int main() {
  zmq::context_t context(1);
  trinity::stream::consumer in(context, "tcp://127.0.0.1:*", {});
  trinity::stream::producer out(context, in.endpoint(), {.id = 4, .streams = 2});
  const char* words[] = {"one", "two", "three"};
  for (const char* w : words) out.send(std::as_bytes(std::span(w, std::strlen(w))));
  bool in_order = true;
  for (unsigned i = 0; i < 3; ++i) {
    auto s = in.next(std::chrono::seconds(10));
    in_order = in_order && s && s->producer() == 4 && s->offset() == i && s->payload().size() == std::strlen(words[i]) &&
               std::memcmp(s->payload().data(), words[i], s->payload().size()) == 0;
    if (s) in.ack(*s);
  }
  in.flush();
  std::printf("trinity::stream from an install:\n");
  EXPECT(in_order, "three samples arrive in order, each once");
  EXPECT(out.drain(std::chrono::seconds(10)), "the producer hears every acknowledgement");
  return consumer::verdict();
}
