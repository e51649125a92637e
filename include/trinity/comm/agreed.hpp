#pragma once
//! \file
//! A step that may fail on some ranks and not others (each reads its own piece of a checkpoint, its own file),
//! run so that the ranks stop together: none goes on into a later collective to wait for one that left. The
//! first failing rank's reason reaches every rank, since a launcher such as mpirun aborts the other processes
//! when the first exits and may keep only that one's error.

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <trinity/comm/broadcast.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/concepts/communicator.hpp>

namespace trinity::comm {

namespace detail {

//! Rank `root`'s `text` on every rank: its length, then its bytes.
template <Communicator C>
std::string broadcast_text(C& c, const std::string& text, int root) {
  std::uint64_t size = text.size();
  binomial::broadcast(c, std::as_writable_bytes(std::span(&size, 1)), root);
  std::string out = c.rank() == root ? text : std::string(static_cast<std::size_t>(size), '\0');
  binomial::broadcast(c, std::as_writable_bytes(std::span(out.data(), out.size())), root);
  return out;
}

}  // namespace detail

//! Runs f() on every rank of `c` (collective: every rank calls it) and returns its result where no rank's
//! threw. Where any threw, every rank throws: a rank whose f threw, its own exception; the others peer_failed,
//! "rank R failed: " and the reason of R, the lowest rank whose f threw.
template <Communicator C, std::invocable F>
std::invoke_result_t<F> agreed(C& c, F&& f) {
  using result = std::invoke_result_t<F>;
  std::conditional_t<std::is_void_v<result>, std::monostate, std::optional<result>> value;
  std::exception_ptr failed;
  std::string reason;
  try {
    if constexpr (std::is_void_v<result>)
      std::invoke(std::forward<F>(f));
    else
      value.emplace(std::invoke(std::forward<F>(f)));
  } catch (const std::exception& e) {
    failed = std::current_exception();
    reason = e.what();
  } catch (...) {
    failed = std::current_exception();
    reason = "an exception that is not a std::exception";
  }
  const std::uint8_t mine = failed ? 1 : 0;
  std::vector<std::uint8_t> all(static_cast<std::size_t>(c.size()));
  ring::all_gather<C, std::uint8_t>(c, std::span(&mine, 1), std::span(all));
  for (int root = 0; root < c.size(); ++root) {
    if (!all[static_cast<std::size_t>(root)]) continue;
    const auto why = detail::broadcast_text(c, reason, root);
    if (failed) std::rethrow_exception(failed);
    throw peer_failed("rank " + std::to_string(root) + " failed: " + why);
  }
  if constexpr (!std::is_void_v<result>) return std::move(*value);
}

}  // namespace trinity::comm
