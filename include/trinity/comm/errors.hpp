#pragma once
//! \file
//! What a collective throws when it cannot finish. A peer that never arrives
//! is a timeout, not a hang; a rank that failed poisons the group, so its
//! peers stop waiting at once instead of each timing out in turn.

#include <stdexcept>
#include <string>

namespace trinity::comm {

//! A peer did not arrive within the communicator's timeout.
class timeout_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! Another rank of the group failed, so this one gave up.
class peer_failed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

//! Prefixes a communication error with the collective it interrupted, keeping its type.
template <class F>
decltype(auto) naming_the_collective(const char* collective, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const timeout_error& e) {
    throw timeout_error(std::string(collective) + ": " + e.what());
  } catch (const peer_failed& e) {
    throw peer_failed(std::string(collective) + ": " + e.what());
  }
}

}  // namespace detail
}  // namespace trinity::comm
