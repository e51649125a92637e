#pragma once
//! \file
//! The in-process backend: N ranks as threads of one process, sharing memory.
//! A message is a rendezvous: the sender posts a pointer, the receiver copies
//! straight out of the sender's buffer (one copy, no staging), and the sender
//! returns once it has. Waits end at the world's timeout with a
//! comm::timeout_error that names both ranks; a rank that fails breaks the
//! world, so its peers stop waiting at once.
//!
//!   comm::thread_world world(4);
//!   comm::run_ranks(world, [&](comm::thread_communicator& c) {
//!     comm::all_reduce(c, std::span<float>(grad[c.rank()]), comm::reduce_op::sum);
//!   });

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <trinity/comm/errors.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

class thread_communicator;

class thread_world {
 public:
  using clock = std::chrono::steady_clock;

  explicit thread_world(int size, std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : size_(size), timeout_(timeout) {
    trinity::detail::require(size >= 1, "size", "a world needs at least one rank");
    trinity::detail::require(timeout.count() > 0, "timeout", "must be positive");
    boxes_ = std::make_unique<mailbox[]>(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
    waiting_for_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) waiting_for_[static_cast<std::size_t>(r)].store(-1);
  }

  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  [[nodiscard]] bool broken() const noexcept { return broken_.load(std::memory_order_acquire); }

  //! Marks the world failed and wakes every waiter, which then throws comm::peer_failed.
  void break_world(std::string why) {
    {
      std::lock_guard lock(why_mutex_);
      if (why_.empty()) why_ = std::move(why);
    }
    broken_.store(true, std::memory_order_release);
    for (std::size_t i = 0; i < static_cast<std::size_t>(size_) * static_cast<std::size_t>(size_); ++i) {
      std::lock_guard lock(boxes_[i].m);
      boxes_[i].cv.notify_all();
    }
  }
  [[nodiscard]] std::string why_broken() const {
    std::lock_guard lock(why_mutex_);
    return why_;
  }

 private:
  friend class thread_communicator;

  // One slot per ordered pair (source, destination); the rendezvous keeps at most one message in it.
  struct mailbox {
    std::mutex m;
    std::condition_variable cv;
    const std::byte* data = nullptr;
    std::size_t size = 0;
    double stamp = 0.0;
    // Written under m; read without it only to spin before blocking.
    std::atomic<std::uint64_t> posted{0}, taken{0};
  };
  mailbox& box(int from, int to) noexcept {
    return boxes_[static_cast<std::size_t>(from) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(to)];
  }

  // Follows "rank a waits for rank b" to the first rank that waits for nobody: the one that never came.
  [[nodiscard]] std::string wait_chain(int from) const {
    std::string chain = "rank " + std::to_string(from);
    int at = from;
    for (int hops = 0; hops < size_; ++hops) {
      const int next = waiting_for_[static_cast<std::size_t>(at)].load(std::memory_order_acquire);
      if (next < 0) break;
      chain += " waits for rank " + std::to_string(next);
      at = next;
      if (at == from) break;
    }
    return chain;
  }

  int size_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<mailbox[]> boxes_;
  std::unique_ptr<std::atomic<int>[]> waiting_for_;
  std::atomic<bool> broken_{false};
  mutable std::mutex why_mutex_;
  std::string why_;
};

//! One rank's view of a thread_world. Not shared between threads: each rank owns its own.
class thread_communicator {
 public:
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "threads";

  thread_communicator(thread_world& world, int rank) : world_(&world), rank_(rank) {
    trinity::detail::require(rank >= 0 && rank < world.size(), "rank", "must be in [0, world size)");
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return world_->size(); }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return sent_.load(std::memory_order_relaxed); }
  [[nodiscard]] thread_world& world() const noexcept { return *world_; }

  void send(std::span<const std::byte> out, int dest) { exchange(out, dest, {}, -1, 0.0); }
  void recv(std::span<std::byte> in, int source) { exchange({}, -1, in, source, 0.0); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    exchange(out, dest, in, source, 0.0);
  }

  //! The primitive: posts `out` to dest (unless dest < 0) with a time stamp, receives exactly in.size()
  //! bytes from source (unless source < 0), and returns once dest has taken `out`. Returns the stamp
  //! source sent with its message (the simulated fabric's clock rides on it).
  double exchange(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source, double stamp) {
    const auto deadline = thread_world::clock::now() + world_->timeout();
    check_peer(dest, "dest");
    check_peer(source, "source");
    if (dest >= 0) {
      auto& b = world_->box(rank_, dest);
      std::unique_lock lock(b.m);
      wait(lock, b, deadline, dest, "take its previous message", [&] { return b.posted == b.taken; });
      b.data = out.data();
      b.size = out.size();
      b.stamp = stamp;
      b.posted.store(b.posted.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      b.cv.notify_all();
      sent_.fetch_add(out.size(), std::memory_order_relaxed);
    }
    // The receiver copies straight out of `out`, so a message must never outlive this call: if the
    // rest of the exchange throws (a count mismatch, a broken world), take it back before unwinding
    // frees the caller's buffer. The receiver copies under the mailbox lock, so retracting under it
    // is safe.
    try {
      return finish_exchange(dest, in, source, deadline);
    } catch (...) {
      if (dest >= 0) retract(world_->box(rank_, dest));
      throw;
    }
  }

 private:
  double finish_exchange(int dest, std::span<std::byte> in, int source, thread_world::clock::time_point deadline) {
    double their_stamp = 0.0;
    if (source >= 0) {
      auto& b = world_->box(source, rank_);
      auto lock = await(b, deadline, source, "send", [&] {
        return b.posted.load(std::memory_order_acquire) > b.taken.load(std::memory_order_acquire);
      });
      if (b.size != in.size()) {
        const std::string why = "rank " + std::to_string(source) + " sent " + std::to_string(b.size) +
                                " bytes where rank " + std::to_string(rank_) + " expected " +
                                std::to_string(in.size()) + ". Fix: every rank must pass the same count";
        lock.unlock();
        world_->break_world(why);
        throw invalid_input("count", why);
      }
      if (!in.empty()) std::memcpy(in.data(), b.data, in.size());
      their_stamp = b.stamp;
      b.taken.store(b.taken.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      b.cv.notify_all();
    }
    if (dest >= 0) {
      auto& b = world_->box(rank_, dest);
      await(b, deadline, dest, "receive",
            [&] { return b.posted.load(std::memory_order_acquire) == b.taken.load(std::memory_order_acquire); });
    }
    return their_stamp;
  }

  static void retract(thread_world::mailbox& b) noexcept {
    std::lock_guard lock(b.m);
    if (b.posted.load(std::memory_order_relaxed) == b.taken.load(std::memory_order_relaxed)) return;
    b.data = nullptr;
    b.size = 0;
    b.posted.store(b.posted.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  // A peer usually answers within microseconds; a condition variable's sleep and wake-up costs tens of them.
  // So spin a little, then yield a little, before wait() blocks.
  template <class Ready>
  static void spin_until(Ready ready) noexcept {
    for (int i = 0; i < 2000; ++i) {
      if (ready()) return;
      if (i >= 1000) std::this_thread::yield();
    }
  }

  void check_peer(int peer, const char* field) const {
    if (peer >= size() || peer < -1)
      throw invalid_input(field, std::to_string(peer) + " is not a rank of a world of " + std::to_string(size()));
  }

  // Spins, then sleeps until ready() under the mailbox's lock, which it returns held.
  template <class Ready>
  std::unique_lock<std::mutex> await(thread_world::mailbox& b, thread_world::clock::time_point deadline, int peer,
                                     const char* what, Ready ready) {
    // Marked before the spin, not only before the sleep: on a loaded machine the spin's yields can outlast
    // another rank's deadline, and a rank not marked ends the wait chain there, blamed for a peer's absence.
    // A peer already there (the common case) costs no store to the array every rank writes.
    auto& me = world_->waiting_for_[static_cast<std::size_t>(rank_)];
    const bool marked = !ready();
    if (marked) {
      me.store(peer, std::memory_order_release);
      spin_until(ready);
    }
    std::unique_lock lock(b.m);
    wait(lock, b, deadline, peer, what, ready);
    if (marked) me.store(-1, std::memory_order_release);
    return lock;
  }

  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, thread_world::mailbox& b, thread_world::clock::time_point deadline,
            int peer, const char* what, Ready ready) {
    if (ready()) return;
    auto& me = world_->waiting_for_[static_cast<std::size_t>(rank_)];
    me.store(peer, std::memory_order_release);
    const bool ok = b.cv.wait_until(lock, deadline, [&] { return ready() || world_->broken(); });
    if (ready()) {
      me.store(-1, std::memory_order_release);
      return;
    }
    lock.unlock();
    if (ok)
      throw peer_failed("rank " + std::to_string(rank_) + " stopped waiting for rank " + std::to_string(peer) +
                        " because another rank failed: " + world_->why_broken());
    const std::string chain = world_->wait_chain(rank_);
    const std::string why = "rank " + std::to_string(rank_) + " of " + std::to_string(size()) + " waited " +
                            std::to_string(world_->timeout().count()) + " ms for rank " + std::to_string(peer) +
                            " to " + what + ", and it never did (" + chain +
                            ", which never arrived). Fix: every rank must call the same collectives in the same "
                            "order; raise the timeout if a rank is merely slow";
    world_->break_world(why);
    throw timeout_error(why);
  }

  thread_world* world_;
  int rank_;
  // A rank's own thread and its progress engine may send through two groups of this communicator at once
  // (comm/group.hpp allows it), so the count is atomic; relaxed, as it orders nothing.
  std::atomic<std::uint64_t> sent_{0};
};

//! Runs f(thread_communicator&) on every rank of the world, one thread each, and joins them. Rethrows
//! the first rank's own failure (a timeout or an error in f), not the peer_failed it caused elsewhere.
template <class F>
void run_ranks(thread_world& world, F f) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world.size()));
  std::vector<std::thread> threads;
  threads.reserve(errors.size());
  for (int r = 0; r < world.size(); ++r) {
    threads.emplace_back([&world, &errors, &f, r] {
      try {
        thread_communicator c(world, r);
        f(c);
      } catch (const peer_failed&) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        world.break_world("rank " + std::to_string(r) + " failed: " + e.what());
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        world.break_world("rank " + std::to_string(r) + " failed");
      }
    });
  }
  for (auto& t : threads) t.join();
  std::exception_ptr secondary;
  for (auto& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const peer_failed&) {
      if (!secondary) secondary = e;
    } catch (...) {
      throw;
    }
  }
  if (secondary) std::rethrow_exception(secondary);
}

}  // namespace trinity::comm
