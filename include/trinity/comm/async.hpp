#pragma once
//! \file
//! Collectives that run while the caller computes: a progress_engine owns one
//! thread per rank that runs the collectives it is handed, in the order it is
//! handed them, and each start returns a `pending` to wait on. This is how
//! communication overlaps backward (a layer's gradient is reduced while the
//! next layer's is computed) and how the next layer's parameters are gathered
//! before they are needed, as DDP's buckets and FSDP's prefetch do.
//!
//!   comm::progress_engine<C> engine(c);
//!   auto done = engine.reduce_scatter(std::span<const float>(grad), std::span<float>(mine), comm::reduce_op::sum);
//!   backward_of_the_next_layer();
//!   done.wait();                          // rethrows the collective's error, if it had one
//!
//! Rules, the same as for stream-ordered collectives elsewhere:
//!  - every rank starts the same collectives in the same order (the engine
//!    runs them in that order, so the ranks meet);
//!  - the buffers stay alive and untouched until the collective is waited on;
//!  - while the engine has work, the communicator is the engine's: the caller
//!    goes through `run` (or waits with `drain`) before using it directly.
//!
//! With MPI the library must have been initialised at MPI_THREAD_SERIALIZED or
//! above (mpi::environment asks for it); the engine refuses a communicator that
//! says it may not be called from another thread.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <span>
#include <thread>
#include <utility>

#include <trinity/comm/collectives.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

//! A collective started on a progress_engine. Default-constructed: one that is already complete.
class pending {
 public:
  pending() = default;
  explicit pending(std::shared_future<void> f) : done_(std::move(f)) {}

  //! Blocks until the collective finished on this rank; rethrows what it threw.
  void wait() const {
    if (done_.valid()) done_.get();
  }
  //! Whether it has finished, without blocking.
  [[nodiscard]] bool ready() const {
    return !done_.valid() || done_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::shared_future<void> done_;
};

// Unconstrained, so a non-Communicator gets the diagnostic ladder's message and its fix, not a bare
// constraint failure.
template <class C>
class progress_engine {
  static_assert(diagnose_communicator<C>(), "trinity: progress_engine<C> takes a Communicator");

 public:
  explicit progress_engine(C& c) : comm_(&c) {
    if constexpr (requires(const C& x) { x.serialized_threads(); })
      trinity::detail::require(c.serialized_threads(), "communicator",
                               "may not be called from a second thread (MPI initialised below "
                               "MPI_THREAD_SERIALIZED). Fix: initialise MPI with trinity::mpi::environment or "
                               "MPI_Init_thread(..., MPI_THREAD_SERIALIZED, ...)");
    worker_ = std::thread([this] { serve(); });
  }
  progress_engine(const progress_engine&) = delete;
  progress_engine& operator=(const progress_engine&) = delete;
  //! Finishes what was started (a collective the other ranks wait for must not vanish), then stops.
  ~progress_engine() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }

  //! Runs `work(communicator)` on the engine's thread after everything started before it.
  template <class Work>
  pending start(Work work) {
    auto task = std::make_shared<std::packaged_task<void()>>([this, w = std::move(work)]() mutable { w(*comm_); });
    pending p(task->get_future().share());
    {
      std::lock_guard lock(mutex_);
      queue_.emplace_back([task] { (*task)(); });
    }
    wake_.notify_one();
    return p;
  }
  //! The same, waited on: a collective in its turn, from the caller's point of view synchronous.
  template <class Work>
  void run(Work work) {
    start(std::move(work)).wait();
  }
  //! Waits for everything started so far; the communicator is the caller's again.
  void drain() {
    start([](C&) {}).wait();
  }

  template <reducible T>
  pending all_reduce(std::span<T> data, reduce_op op, algorithm how = algorithm::automatic) {
    return start([=](C& c) { comm::all_reduce(c, data, op, how); });
  }
  template <reducible T>
  pending reduce_scatter(std::span<const T> in, std::span<T> out, reduce_op op, algorithm how = algorithm::automatic) {
    return start([=](C& c) { comm::reduce_scatter(c, in, out, op, how); });
  }
  template <class T>
  pending all_gather(std::span<const T> in, std::span<T> out, algorithm how = algorithm::automatic) {
    return start([=](C& c) { comm::all_gather(c, in, out, how); });
  }

  [[nodiscard]] C& communicator() noexcept { return *comm_; }

 private:
  void serve() {
    for (;;) {
      std::function<void()> next;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      next();  // a packaged_task: its exception goes to its pending, not here
    }
  }

  C* comm_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread worker_;  // last: started once everything it reads exists
};

}  // namespace trinity::comm
