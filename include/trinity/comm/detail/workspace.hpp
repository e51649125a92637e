#pragma once
//! \file
//! Scratch memory for the collectives, kept per thread and grown, never
//! shrunk: a 256 MiB all-reduce that allocated afresh on every call would
//! spend more time in page faults than on the wire.

#include <cstddef>
#include <memory>
#include <span>

namespace trinity::comm::detail {

template <class T>
std::span<T> workspace(std::size_t count) {
  struct buffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t bytes = 0;
  };
  thread_local buffer b;
  const std::size_t need = count * sizeof(T);
  if (need > b.bytes) {
    b.data.reset();  // release first: the old and the new buffer need not both fit
    b.data = std::make_unique_for_overwrite<std::byte[]>(need);
    b.bytes = need;
  }
  return {reinterpret_cast<T*>(b.data.get()), count};
}

}  // namespace trinity::comm::detail
