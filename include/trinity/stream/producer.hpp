#pragma once
//! \file
//! producer: the sending end of a stream:: link. One process (or thread) sends
//! its samples to one consumer over N parallel streams, each a ZeroMQ DEALER
//! socket driven by a thread of its own and held to an optional rate cap (the
//! per-thread limit of paper §4.2 that more streams break).
//!
//! Guarantees, with the consumer beside it (consumer.hpp):
//!  - **Offsets.** The samples of a producer id are numbered 0, 1, 2, ... for
//!    the life of the link, across restarts of either end. send() returns the
//!    offset it gave.
//!  - **Bounded, with back-pressure.** At most `window` samples, and `window_bytes`,
//!    are unacknowledged at once (the smaller of this end's and the consumer's
//!    window); send() blocks while that many are. Each socket also has a
//!    high-water mark.
//!  - **Nothing lost.** A sample stays here, for sending again, until the consumer
//!    acknowledges it. The consumer answers a silence of `probe_after` with where
//!    it stands, and the producer sends again from there; a consumer that restarted
//!    (a new epoch) gets everything from its acknowledged offset again.
//!  - **Resume.** A restarted producer asks the consumer where it stands
//!    (resume_offset()) and numbers its next sample from the consumer's acknowledged
//!    offset: the application makes samples from that offset on again.
//! Ordering across streams is the consumer's job: it delivers each producer's
//! samples in offset order, once.
//!
//! Small samples travel batched: the samples a stream claims in one round (up to
//! 64), those of 16 KiB or less, go as batch frames of up to 64 KiB (detail/frame.hpp),
//! so a 1 KiB sample costs a share of a message, not a message. A sample is still
//! kept, acknowledged and sent again on its own.
//!
//! One live producer per id: two at once would interleave one offset sequence.
//!
//! resume_offset() and the first send() wait for the consumer's first answer,
//! which it gives from inside consumer::next(): run a producer beside its
//! consumer (another process or thread), never before it on the same thread.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include <trinity/error.hpp>
#include <trinity/stream/detail/frame.hpp>
#include <trinity/stream/detail/frame_pool.hpp>
#include <trinity/stream/detail/wake_pipe.hpp>
#include <trinity/stream/rate_cap.hpp>
#include <trinity/stream/stream_error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::stream {

struct producer_options {
  std::uint32_t id = 0;                        //!< this producer's id: the same across its restarts
  std::size_t streams = 1;                     //!< parallel streams, each a socket and a thread
  bytes_per_second stream_cap{0};              //!< each stream's most (0: uncapped)
  bytes burst{0};                              //!< a stream's bucket (0: rate_cap's default)
  std::size_t window = 1024;                   //!< most unacknowledged samples
  bytes window_bytes{16.0 * 1024 * 1024};      //!< most unacknowledged bytes (one sample always goes)
  int high_water_mark = 1000;                  //!< ZeroMQ's SNDHWM/RCVHWM per socket
  std::chrono::milliseconds probe_after{250};  //!< silence, with samples unacknowledged, before asking
};

inline void validate(const producer_options& o) {
  trinity::detail::require(o.streams >= 1 && o.streams <= 256, "streams", "must be 1 to 256");
  trinity::detail::require(o.window >= 1, "window", "must be at least 1 sample");
  trinity::detail::require(o.window_bytes.value() >= 1, "window_bytes", "must be at least 1 byte");
  trinity::detail::require(o.high_water_mark >= 1, "high_water_mark", "must be at least 1 message");
  trinity::detail::require(o.probe_after.count() >= 1, "probe_after", "must be at least 1 ms");
  trinity::detail::require(o.stream_cap.value() >= 0, "stream_cap", "must be 0 (uncapped) or positive");
}

struct producer_stats {
  std::uint64_t sent = 0;                   //!< samples sent, again-sent ones included
  std::uint64_t messages = 0;               //!< messages they went in: a batch frame carries many small samples
  std::uint64_t resent = 0;                 //!< samples sent again (after a probe or a consumer restart)
  std::uint64_t acked = 0;                  //!< the consumer's acknowledged offset as last heard
  std::uint64_t consumer_restarts = 0;      //!< new consumer epochs seen after the first
  std::uint64_t malformed = 0;              //!< frames from the consumer that were not a state of ours
  std::size_t max_unacked = 0;              //!< most samples held for sending again at once (≤ window)
  std::vector<std::uint64_t> stream_bytes;  //!< bytes each stream sent
};

class producer {
 public:
  //! Connects to the consumer at endpoint (e.g. "tcp://10.0.0.2:5555") and starts the streams.
  producer(zmq::context_t& context, std::string endpoint, producer_options options)
      : context_(context), endpoint_(std::move(endpoint)), options_(options) {
    validate(options_);
    trinity::detail::require(!endpoint_.empty(), "endpoint", "must name the consumer, e.g. tcp://host:5555");
    window_ = options_.window;
    stats_.stream_bytes.assign(options_.streams, 0);
    asleep_.assign(options_.streams, false);
    wakes_ = std::vector<detail::wake_pipe>(options_.streams);
    // The sockets connect here, so a bad endpoint is the caller's error; each then moves to its thread.
    sockets_.reserve(options_.streams);
    for (std::size_t i = 0; i < options_.streams; ++i) {
      auto& s = sockets_.emplace_back(context_, zmq::socket_type::dealer);
      s.set(zmq::sockopt::sndhwm, options_.high_water_mark);
      s.set(zmq::sockopt::rcvhwm, options_.high_water_mark);
      s.set(zmq::sockopt::linger, 0);
      try {
        s.connect(endpoint_);
      } catch (const zmq::error_t& e) {
        throw invalid_input("endpoint", "'" + endpoint_ + "' cannot be connected to (" + e.what() +
                                            "); write it as tcp://host:port or ipc://path");
      }
    }
    threads_.reserve(options_.streams);
    for (std::size_t i = 0; i < options_.streams; ++i) threads_.emplace_back([this, i] { guarded_stream(i); });
  }
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;
  //! Stops the streams; what is unacknowledged stays unsent (drain() first to wait for it).
  ~producer() {
    {
      std::lock_guard lk(mutex_);
      stop_ = true;
    }
    wake_all();
    cv_app_.notify_all();
    for (auto& t : threads_) t.join();
  }

  [[nodiscard]] std::uint32_t id() const noexcept { return options_.id; }

  //! The offset the next sample gets: where the consumer stands for this id. Waits for its answer.
  std::uint64_t resume_offset(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::unique_lock lk(mutex_);
    const bool answered = cv_app_.wait_for(lk, timeout, [&] { return have_state_ || stop_; });
    rethrow_failure();
    if (!answered)
      throw stream_error("producer " + std::to_string(options_.id) + ": no answer from the consumer at " + endpoint_ +
                         " within " + std::to_string(timeout.count()) + " ms; is it running and bound there?");
    return acked_ + retained_.size();
  }

  //! Sends a sample, waiting while `window` are unacknowledged; returns its offset.
  std::uint64_t send(std::span<const std::byte> payload) {
    auto r = send_for(payload, std::chrono::hours(24 * 365));
    if (!r) throw stream_error("producer " + std::to_string(options_.id) + ": stopped while sending");
    return *r;
  }

  //! send(), giving up after timeout (nothing is sent then).
  std::optional<std::uint64_t> send_for(std::span<const std::byte> payload, std::chrono::milliseconds timeout) {
    zmq::message_t frame = pool_->make_frame(detail::header_bytes + payload.size());
    if (!payload.empty())
      std::memcpy(static_cast<std::byte*>(frame.data()) + detail::header_bytes, payload.data(), payload.size());
    std::uint64_t offset = 0;
    std::size_t sleeper = options_.streams;
    {
      std::unique_lock lk(mutex_);
      const auto fits = [&] {
        return retained_.empty() ||
               (retained_.size() < window_ &&
                static_cast<double>(retained_bytes_ + frame.size()) <= options_.window_bytes.value());
      };
      if (!cv_app_.wait_for(lk, timeout, [&] { return stop_ || (have_state_ && fits()); })) return std::nullopt;
      rethrow_failure();
      if (stop_) return std::nullopt;
      offset = acked_ + retained_.size();
      detail::frame_header h;
      h.kind = detail::frame_kind::data;
      h.producer = options_.id;
      h.field = {offset, 0, 0, 0};
      detail::encode(
          h, std::span<std::byte, detail::header_bytes>(static_cast<std::byte*>(frame.data()), detail::header_bytes));
      retained_bytes_ += frame.size();
      retained_.push_back(std::move(frame));
      stats_.max_unacked = std::max(stats_.max_unacked, retained_.size());
      // One sleeping stream is enough for one sample; a busy stream finds it on its next claim.
      for (std::size_t i = 0; i < asleep_.size(); ++i)
        if (asleep_[i]) {
          asleep_[i] = false;
          sleeper = i;
          break;
        }
    }
    if (sleeper < options_.streams) wakes_[sleeper].signal();
    return offset;
  }

  //! Waits until the consumer has acknowledged everything sent; false on timeout.
  bool drain(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mutex_);
    const bool done = cv_app_.wait_for(lk, timeout, [&] { return stop_ || (have_state_ && retained_.empty()); });
    rethrow_failure();
    return done && !stop_;
  }

  [[nodiscard]] producer_stats stats() const {
    std::lock_guard lk(mutex_);
    return stats_;
  }

 private:
  // A state frame from the consumer: where it stands for this id. True when the streams have work again.
  bool on_state(const detail::frame_header& h) {
    const std::uint64_t acked = h.field[0], received = h.field[1], epoch = h.field[2], window = h.field[3];
    std::lock_guard lk(mutex_);
    last_heard_ = std::chrono::steady_clock::now();
    const auto effective_window = std::clamp<std::uint64_t>(window, 1, options_.window);
    if (!have_state_) {
      // First contact: number from where the consumer stands (0 for a new id).
      have_state_ = true;
      epoch_ = epoch;
      window_ = static_cast<std::size_t>(effective_window);
      acked_ = next_send_ = std::max(acked_, acked);
      stats_.acked = acked_;
      cv_app_.notify_all();
      return false;
    }
    window_ = static_cast<std::size_t>(effective_window);
    if (epoch != epoch_) {
      // The consumer restarted and has only what its journal says: send everything after it again.
      epoch_ = epoch;
      ++stats_.consumer_restarts;
      advance(acked);
      next_send_ = acked_;
      need_hello_ = true;  // tell it what was acknowledged before (it may have no journal)
      return true;
    }
    advance(acked);
    if ((h.flags & detail::flag_reply_to_hello) && std::max(acked_, received) < next_send_) {
      // An answer to a probe: what has not arrived by now went missing (a dropped connection); send it again.
      next_send_ = std::max(acked_, received);
      return true;
    }
    return false;
  }

  // Drops what the consumer acknowledged (mutex held).
  void advance(std::uint64_t acked) {
    const std::uint64_t end = acked_ + retained_.size();
    if (acked > end) {  // acknowledges more than was ever sent: not a consumer of ours
      ++stats_.malformed;
      return;
    }
    if (acked <= acked_) return;
    const auto gone = retained_.begin() + static_cast<std::ptrdiff_t>(acked - acked_);
    for (auto it = retained_.begin(); it != gone; ++it) retained_bytes_ -= it->size();
    retained_.erase(retained_.begin(), gone);
    acked_ = acked;
    next_send_ = std::max(next_send_, acked_);
    stats_.acked = acked_;
    cv_app_.notify_all();
  }

  static zmq::message_t hello_frame(std::uint32_t producer, std::uint64_t acked) {
    zmq::message_t m(detail::header_bytes);
    detail::frame_header h;
    h.kind = detail::frame_kind::hello;
    h.producer = producer;
    h.field = {acked, 0, 0, 0};
    detail::encode(h,
                   std::span<std::byte, detail::header_bytes>(static_cast<std::byte*>(m.data()), detail::header_bytes));
    return m;
  }

  // A stream that fails stops the producer; the application sees the error at its next call.
  void guarded_stream(std::size_t index) {
    try {
      run_stream(index);
    } catch (...) {
      {
        std::lock_guard lk(mutex_);
        if (!failure_) failure_ = std::current_exception();
        stop_ = true;
      }
      cv_app_.notify_all();
      wake_all();
    }
  }

  void rethrow_failure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

  void run_stream(std::size_t index) {
    using clock = std::chrono::steady_clock;
    zmq::socket_t& socket = sockets_[index];
    rate_cap bucket(options_.stream_cap, options_.burst);
    std::deque<zmq::message_t> pending;  // claimed, not yet taken by the socket (high-water mark)
    std::uint64_t sent_high = 0;         // one past the highest offset this stream sent
    auto last_hello = clock::time_point{};
    zmq::message_t in;
    // Claims are taken a round at a time, so a stream takes the lock once per round, not once per sample; the
    // small samples of a round travel in batch frames (pack).
    constexpr std::size_t claims_per_round = 64, most_pending = 8;
    std::vector<zmq::message_t> claimed;
    claimed.reserve(claims_per_round);
    std::uint64_t first_claimed = 0, packed = 0;  // messages packed since the stats last heard
    int idle_rounds = 0;

    // What the consumer said.
    const auto read_states = [&] {
      while (socket.recv(in, zmq::recv_flags::dontwait)) {
        const auto h = detail::decode({static_cast<const std::byte*>(in.data()), in.size()});
        if (!h || h->kind != detail::frame_kind::state || h->producer != options_.id || in.more()) {
          std::lock_guard lk(mutex_);
          ++stats_.malformed;
          continue;
        }
        if (on_state(*h)) wake_all();
      }
    };
    auto last_read = clock::time_point{};
    bool woke_on_socket = true;
    for (;;) {
      // Read after a poll saw something, or every 200 us while busy: states come one per batch of
      // acknowledgements, and a read per sample would cost a system call per sample.
      if (woke_on_socket || clock::now() - last_read >= std::chrono::microseconds(200)) {
        last_read = clock::now();
        woke_on_socket = false;
        read_states();
      }
      const auto now = clock::now();
      bool ask = false;
      std::uint64_t ask_acked = 0;
      bool sleeping = false;
      bool yield_once = false;
      auto delay = clock::duration::zero();
      {
        std::unique_lock lk(mutex_);
        // Last round's claims are let go here, under the lock an acknowledgement drops the retained frames
        // under: whichever reference goes last, pack()'s reads come before the buffer's reuse in an order
        // TSan sees (ZeroMQ's reference count is atomics of an uninstrumented library).
        claimed.clear();
        if (stop_) return;
        stats_.messages += std::exchange(packed, 0);
        // Stream 0 asks where the consumer stands: until it first answers, and after a silence.
        if (index == 0 && hello_due(now, last_hello)) {
          ask = true;
          ask_acked = acked_;
        }
        first_claimed = next_send_;
        if (pending.size() < most_pending) delay = claim(index, claims_per_round, bucket, now, sent_high, claimed);
        if (!pending.empty() || !claimed.empty()) {
          idle_rounds = 0;
        } else if (delay == clock::duration::zero()) {
          // Nothing to send. The application is likely mid-send: give it the core twice before paying for a
          // sleep (until send(), a state or stop wakes this stream) and a wake.
          yield_once = idle_rounds < 2;
          sleeping = !yield_once;
          idle_rounds = yield_once ? idle_rounds + 1 : 0;
          asleep_[index] = sleeping;
        }
      }
      if (!claimed.empty()) {
        const std::size_t before = pending.size();
        pack(claimed, first_claimed, pending);
        packed += pending.size() - before;
      }
      if (ask) (void)socket.send(hello_frame(options_.id, ask_acked), zmq::send_flags::dontwait);
      if (yield_once) {
        std::this_thread::yield();
        continue;
      }
      while (!pending.empty() && socket.send(pending.front(), zmq::send_flags::dontwait)) pending.pop_front();
      if (pending.empty() && !sleeping && delay == clock::duration::zero()) continue;
      woke_on_socket = wait_for_work(index, !pending.empty(), sleeping, delay);
      if (sleeping) {
        std::lock_guard lk(mutex_);
        asleep_[index] = false;
      }
    }
  }

  // Whether stream 0 should ask where the consumer stands now: until it first answers, after a restart, and
  // after a silence with samples unacknowledged (mutex held).
  bool hello_due(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point& last_hello) {
    const auto hello_every = have_state_ ? options_.probe_after : std::chrono::milliseconds(100);
    const bool waiting = !have_state_ || !retained_.empty();
    const bool silent = !have_state_ || now - last_heard_ >= options_.probe_after;
    if (!need_hello_ && !(waiting && silent && now - last_hello >= hello_every)) return false;
    need_hello_ = false;
    last_hello = now;
    return true;
  }

  // Claims up to `most` samples from next_send_ on into `claimed`, as the rate cap allows; returns how long the
  // cap asks to wait (zero when it did not stop the claims). The bucket is charged at the claim: what a stream
  // sends by any time is at most what it claimed. A claim shares the retained frame's buffer (ZeroMQ counts
  // references), so it stays readable after the lock, whatever an acknowledgement drops meanwhile (mutex held).
  std::chrono::steady_clock::duration claim(std::size_t index, std::size_t most, rate_cap& bucket,
                                            std::chrono::steady_clock::time_point now, std::uint64_t& sent_high,
                                            std::vector<zmq::message_t>& claimed) {
    while (claimed.size() < most && have_state_ && next_send_ < acked_ + retained_.size()) {
      const auto delay = bucket.wait(now);
      if (delay > std::chrono::steady_clock::duration::zero()) return delay;
      auto& m = claimed.emplace_back();
      m.copy(retained_[next_send_ - acked_]);
      bucket.take(m.size(), now);
      if (next_send_ < sent_high) ++stats_.resent;
      ++next_send_;
      sent_high = std::max(sent_high, next_send_);
      ++stats_.sent;
      stats_.stream_bytes[index] += m.size();
    }
    return std::chrono::steady_clock::duration::zero();
  }

  // Waits for the socket (a state, or room under the high-water mark when `sending`), a wake-up, or a timer:
  // the cap's `delay`, 50 ms asleep, 10 ms otherwise (stream 0, which probes, at most 20 ms). True when the
  // socket has something to read.
  bool wait_for_work(std::size_t index, bool sending, bool sleeping, std::chrono::steady_clock::duration delay) {
    auto timeout = std::chrono::milliseconds(sleeping ? 50 : 10);
    if (delay > std::chrono::steady_clock::duration::zero())
      timeout = std::max(std::chrono::milliseconds(1),
                         std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(delay)));
    if (index == 0) timeout = std::min(timeout, std::chrono::milliseconds(20));
    zmq::pollitem_t items[2] = {
        {static_cast<void*>(sockets_[index]), 0, static_cast<short>(ZMQ_POLLIN | (sending ? ZMQ_POLLOUT : 0)), 0},
        {nullptr, wakes_[index].read_fd(), ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, timeout);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
    wakes_[index].clear();
    return (items[0].revents & ZMQ_POLLIN) != 0;
  }

  // The claimed frames (offsets first, first + 1, ...) as messages: runs of small samples as batch frames of up
  // to batch_limit bytes, a sample of its own (a large one, or a run of one) as the data frame it is, sent
  // without a copy. The claims copied into a batch stay in `claimed`, for run_stream to let go under the lock.
  void pack(std::vector<zmq::message_t>& claimed, std::uint64_t first, std::deque<zmq::message_t>& out) const {
    constexpr std::size_t small = 16 * 1024, batch_limit = 64 * 1024;
    std::size_t i = 0;
    while (i < claimed.size()) {
      std::size_t j = i, bytes = detail::header_bytes;
      while (j < claimed.size() && j - i < detail::max_batch_count) {
        const std::size_t payload = claimed[j].size() - detail::header_bytes;
        if (payload > small || (j > i && bytes + detail::length_bytes + payload > batch_limit)) break;
        bytes += detail::length_bytes + payload;
        ++j;
      }
      if (j - i < 2) {  // one sample (or a large one): its own data frame
        out.push_back(std::move(claimed[i]));
        ++i;
        continue;
      }
      zmq::message_t m(bytes);
      auto* p = static_cast<std::byte*>(m.data());
      detail::frame_header h;
      h.kind = detail::frame_kind::batch;
      h.producer = options_.id;
      h.field = {first + i, j - i, 0, 0};
      detail::encode(h, std::span<std::byte, detail::header_bytes>(p, detail::header_bytes));
      p += detail::header_bytes;
      for (std::size_t k = i; k < j; ++k) {
        const std::size_t payload = claimed[k].size() - detail::header_bytes;
        detail::store_u32(p, static_cast<std::uint32_t>(payload));
        std::memcpy(p + detail::length_bytes, static_cast<const std::byte*>(claimed[k].data()) + detail::header_bytes,
                    payload);
        p += detail::length_bytes + payload;
      }
      out.push_back(std::move(m));
      i = j;
    }
  }

  // Wakes every stream (a state that gave them work, or stop).
  void wake_all() {
    for (auto& w : wakes_) w.signal();
  }

  zmq::context_t& context_;
  std::string endpoint_;
  producer_options options_;
  std::shared_ptr<detail::frame_pool> pool_ = detail::frame_pool::make(std::size_t{256} << 20);
  std::vector<zmq::socket_t> sockets_;  // one per stream, each used by its thread only
  std::vector<std::thread> threads_;
  std::vector<detail::wake_pipe> wakes_;  // one per stream: a sleeping stream polls its own
  std::exception_ptr failure_;

  mutable std::mutex mutex_;
  std::condition_variable cv_app_;
  std::deque<zmq::message_t> retained_;  // offsets [acked_, acked_ + size): unacknowledged, kept to send again
  std::size_t retained_bytes_ = 0;
  std::uint64_t acked_ = 0;
  std::uint64_t next_send_ = 0;  // the next offset a stream takes
  std::size_t window_ = 0;
  bool have_state_ = false;
  std::uint64_t epoch_ = 0;
  bool need_hello_ = false;
  std::chrono::steady_clock::time_point last_heard_{};
  bool stop_ = false;
  std::vector<bool> asleep_;  // streams sleeping with nothing to send (send() wakes them)
  producer_stats stats_;
};

}  // namespace trinity::stream
