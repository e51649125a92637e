#pragma once
// A communicator that moves bytes through an in-process one: the base of the tests' communicators that bring
// collectives of their own (as MPI's shared-memory window or an NCCL binding does) to watch how they are used.
#include <trinity/comm/thread_world.hpp>
#include <trinity/concepts/communicator.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace trinity::test {

struct forwarding_communicator {
  using communicator_concept = communicator_tag;
  comm::thread_communicator* inner;

  [[nodiscard]] int rank() const { return inner->rank(); }
  [[nodiscard]] int size() const { return inner->size(); }
  [[nodiscard]] std::uint64_t bytes_sent() const { return inner->bytes_sent(); }
  void send(std::span<const std::byte> out, int dest) { inner->send(out, dest); }
  void recv(std::span<std::byte> in, int source) { inner->recv(in, source); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    inner->sendrecv(out, dest, in, source);
  }
};

}  // namespace trinity::test
