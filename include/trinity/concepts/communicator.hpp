#pragma once
//! \file
//! Communicator: a group of ranks that exchange bytes point to point. The
//! collectives (comm/collectives.hpp) are written once against it; a backend
//! supplies send, recv and sendrecv, and may add its own fast path for a
//! collective (MPI's shared-memory window), which the collective then prefers.
//!
//!   struct my_comm {
//!     using communicator_concept = trinity::communicator_tag;
//!     static constexpr std::string_view name = "mine";
//!     int rank() const; int size() const;
//!     void send(std::span<const std::byte>, int dest);
//!     void recv(std::span<std::byte>, int source);           // exactly recv.size() bytes
//!     void sendrecv(std::span<const std::byte>, int dest, std::span<std::byte>, int source);
//!     std::uint64_t bytes_sent() const;                       // what this rank has put on the wire
//!   };
//!
//! A peer that never arrives ends the call with comm::timeout_error, never a hang.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>

namespace trinity {

//! Says `using communicator_concept = trinity::communicator_tag;`.
template <class C>
concept opts_into_communicator = requires {
  typename C::communicator_concept;
}
&&std::same_as<typename C::communicator_concept, communicator_tag>;

//! rank() and size(), as ints, so they mix with MPI's.
template <class C>
concept knows_its_place = requires(const C& c) {
  { c.rank() } -> std::same_as<int>;
  { c.size() } -> std::same_as<int>;
};

//! send, recv and sendrecv of raw bytes.
template <class C>
concept exchanges_bytes = requires(C& c, std::span<const std::byte> out, std::span<std::byte> in, int peer) {
  c.send(out, peer);
  c.recv(in, peer);
  c.sendrecv(out, peer, in, peer);
};

//! Counts the bytes it has sent, so traffic can be checked against a model.
template <class C>
concept counts_traffic = requires(const C& c) {
  { c.bytes_sent() } -> std::convertible_to<std::uint64_t>;
};

template <class C>
concept Communicator =
    opts_into_communicator<C> && names_itself<C> && knows_its_place<C> && exchanges_bytes<C> && counts_traffic<C>;

//! Fails to compile, with the fix in the message, unless C is a Communicator.
template <class C>
consteval bool diagnose_communicator() {
  static_assert(opts_into_communicator<C>,
                "trinity: this type is not a Communicator. Fix: add `using communicator_concept = "
                "trinity::communicator_tag;`.");
  if constexpr (opts_into_communicator<C>) {
    static_assert(names_itself<C>,
                  "trinity: a Communicator names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(knows_its_place<C>,
                  "trinity: a Communicator knows its place. Fix: add `int rank() const` and "
                  "`int size() const`.");
    static_assert(exchanges_bytes<C>,
                  "trinity: a Communicator moves bytes. Fix: add `send(std::span<const std::byte>, int dest)`, "
                  "`recv(std::span<std::byte>, int source)` and `sendrecv(out, dest, in, source)`.");
    static_assert(counts_traffic<C>,
                  "trinity: a Communicator counts what it sends. Fix: add `std::uint64_t bytes_sent() const`.");
  }
  return Communicator<C>;
}

}  // namespace trinity
