#pragma once
//! \file
//! consumer: the receiving end of a stream:: link. It binds one ZeroMQ ROUTER
//! socket; any number of producers (producer.hpp) connect to it, each over its
//! own N streams.
//!
//! What the application sees: next() hands out samples, each producer's in
//! offset order with none missing and none twice; ack() says a sample is done
//! with. Acknowledgements are batched (ack_every, ack_bytes), written to the journal (when
//! there is one) *before* the producers hear them, so a producer forgets a
//! sample only after the journal holds its acknowledgement.
//!
//! Across a crash: a consumer restarted on the same journal resumes each
//! producer at its acknowledged offset, under a new epoch, and the producers
//! send it everything after that again. A sample the application had from
//! next() but had not acknowledged comes again: processing is at least once
//! for the samples in hand when the consumer dies, and acknowledgement exactly
//! once. (Record the result with the ack, through its tag, for exactly-once
//! results.) Without a journal a restarted consumer trusts the producers:
//! what they saw acknowledged counts as consumed.
//!
//! Capacity: a producer's samples in hand here (waiting to be delivered, or
//! arrived early over another stream) stay within `window` of its acknowledged
//! offset; a frame beyond it is dropped (its producer sends it again), so the
//! memory held is bounded by producers · window samples.
//!
//! Every frame is read as hostile: malformed frames, unknown producers past
//! max_producers, and duplicates are dropped and counted, never trusted.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include <zmq.hpp>

#include <trinity/error.hpp>
#include <trinity/stream/ack_journal.hpp>
#include <trinity/stream/detail/frame.hpp>
#include <trinity/stream/rate_cap.hpp>
#include <trinity/stream/stream_error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::stream {

struct consumer_options {
  std::size_t window = 1024;                       //!< most samples of one producer in hand past its ack
  std::optional<std::filesystem::path> journal{};  //!< where acknowledgements are kept (none: in memory)
  bool journal_sync = false;                       //!< fdatasync each batch (survive a power cut too)
  std::size_t ack_every = 64;                      //!< acknowledgements batched before the producers hear...
  bytes ack_bytes{1024.0 * 1024};                  //!< ...or these many bytes of samples acknowledged
  int high_water_mark = 1000;                      //!< ZeroMQ's RCVHWM/SNDHWM
  bytes_per_second link_cap{0};                    //!< the link this stands for (0: as fast as it goes)
  std::size_t max_producers = 4096;                //!< distinct producer ids accepted
};

inline void validate(const consumer_options& o) {
  trinity::detail::require(o.window >= 1, "window", "must be at least 1 sample");
  trinity::detail::require(o.ack_every >= 1, "ack_every", "must be at least 1");
  trinity::detail::require(o.high_water_mark >= 1, "high_water_mark", "must be at least 1 message");
  trinity::detail::require(o.link_cap.value() >= 0, "link_cap", "must be 0 (uncapped) or positive");
  trinity::detail::require(o.max_producers >= 1, "max_producers", "must be at least 1");
}

struct consumer_stats {
  std::uint64_t received = 0;       //!< samples taken in, alone or batched (not duplicates)
  std::uint64_t delivered = 0;      //!< samples next() handed out
  std::uint64_t acked = 0;          //!< samples acknowledged
  std::uint64_t duplicates = 0;     //!< samples already had (sent again after a probe or restart)
  std::uint64_t beyond_window = 0;  //!< samples past a producer's window, dropped
  std::uint64_t malformed = 0;      //!< frames that were not frames of this protocol
  std::uint64_t stale_journal = 0;  //!< hellos saying the journal lost acknowledgements (the link stalls)
  std::uint64_t payload_bytes = 0;  //!< bytes of the samples taken in
  std::size_t max_in_hand = 0;      //!< most samples of one producer held at once (≤ window)
};

namespace detail {
// A sample's bytes inside the message that brought them: a data frame of its own, or its place in a batch, which
// its samples share.
struct payload_ref {
  std::shared_ptr<const zmq::message_t> message;
  std::size_t start = 0, size = 0;
};
}  // namespace detail

//! One sample: its producer, its offset and its bytes (held in the message that brought them).
class sample {
 public:
  [[nodiscard]] std::uint32_t producer() const noexcept { return producer_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::span<const std::byte> payload() const noexcept {
    return {static_cast<const std::byte*>(bytes_.message->data()) + bytes_.start, bytes_.size};
  }

 private:
  friend class consumer;
  sample(std::uint32_t p, std::uint64_t o, detail::payload_ref b) : producer_(p), offset_(o), bytes_(std::move(b)) {}
  std::uint32_t producer_;
  std::uint64_t offset_;
  detail::payload_ref bytes_;
};

class consumer {
 public:
  //! Binds endpoint ("tcp://*:5555"; "tcp://127.0.0.1:*" for any free port, see endpoint()).
  consumer(zmq::context_t& context, const std::string& endpoint, consumer_options options)
      : options_(std::move(options)), socket_(context, zmq::socket_type::router) {
    validate(options_);
    if (options_.journal) {
      journal_ = std::make_unique<ack_journal>(*options_.journal, options_.journal_sync);
      for (const auto& [p, next] : journal_->positions()) {
        auto& pr = peers_[p];
        pr.acked = pr.delivered = pr.received = next;
      }
    }
    // A new epoch each start, so producers tell a restarted consumer from a slow one.
    std::random_device rd;
    epoch_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
             static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    if (epoch_ == 0) epoch_ = 1;
    link_ = rate_cap(options_.link_cap);
    socket_.set(zmq::sockopt::rcvhwm, options_.high_water_mark);
    socket_.set(zmq::sockopt::sndhwm, options_.high_water_mark);
    socket_.set(zmq::sockopt::linger, 0);
    // A consumer restarted in the same process finds its old socket still closing (ZeroMQ closes in the
    // background): an address in use is tried again for a second before it is an error.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (;;) {
      try {
        socket_.bind(endpoint);
        break;
      } catch (const zmq::error_t& e) {
        if (e.num() == EADDRINUSE && std::chrono::steady_clock::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        throw invalid_input("endpoint", "'" + endpoint + "' cannot be bound (" + e.what() +
                                            "); write it as tcp://*:port, tcp://127.0.0.1:* or ipc://path");
      }
    }
  }
  consumer(const consumer&) = delete;
  consumer& operator=(const consumer&) = delete;
  ~consumer() {
    try {
      flush();
    } catch (...) {  // a destructor cannot report; flush() explicitly to see the error
    }
  }

  //! The endpoint bound, with the port the system chose for "*".
  [[nodiscard]] std::string endpoint() const { return socket_.get(zmq::sockopt::last_endpoint); }

  //! The next sample, or nothing when none arrives within timeout.
  std::optional<sample> next(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (bool first = true;; first = false) {
      if (!ready_.empty()) {
        sample s = std::move(ready_.front());
        ready_.pop_front();
        ++peers_[s.producer()].delivered;
        ++stats_.delivered;
        return s;
      }
      // What has arrived already costs no poll.
      receive_some();
      if (!ready_.empty()) continue;
      flush();  // before waiting: let the producers go on
      const auto now = std::chrono::steady_clock::now();
      if (!first && now >= deadline) return std::nullopt;
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(std::max(deadline - now, decltype(now - now){}));
      if (link_.capped()) {
        const auto debt = link_.wait(now);
        if (debt > std::chrono::steady_clock::duration::zero()) {
          // The link is busy with what it already carried: nothing more arrives until then.
          std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(debt, deadline - now));
          continue;
        }
      }
      zmq::pollitem_t items[1] = {{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 1, wait);
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
      }
      receive_some();
    }
  }

  //! Says s is done with; each producer's samples in the order next() gave them.
  void ack(const sample& s, std::uint64_t tag = 0) {
    auto it = peers_.find(s.producer());
    trinity::detail::require(
        it != peers_.end() && s.offset() == it->second.acked && it->second.acked < it->second.delivered, "sample",
        "acknowledged out of order: producer " + std::to_string(s.producer()) + " offset " +
            std::to_string(s.offset()) + "; acknowledge each producer's samples in the order next() gave them");
    if (journal_) journal_->append(s.producer(), s.offset(), tag);
    ++it->second.acked;
    it->second.dirty = true;
    ++stats_.acked;
    unflushed_bytes_ += s.payload().size();
    if (++unflushed_ >= options_.ack_every || static_cast<double>(unflushed_bytes_) >= options_.ack_bytes.value())
      flush();
  }

  //! Writes the acknowledgements to the journal, then tells the producers.
  void flush() {
    if (unflushed_ == 0) return;
    if (journal_) journal_->flush();
    unflushed_ = 0;
    unflushed_bytes_ = 0;
    for (auto& [id, pr] : peers_) {
      if (!pr.dirty) continue;
      pr.dirty = false;
      send_state(id, pr, false);
    }
  }

  //! The offset producer p resumes from: how many of its samples are acknowledged.
  [[nodiscard]] std::uint64_t acked(std::uint32_t producer) const {
    auto it = peers_.find(producer);
    return it == peers_.end() ? 0 : it->second.acked;
  }
  [[nodiscard]] const consumer_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }

 private:
  struct peer {
    std::uint64_t acked = 0;                             // acknowledged: [0, acked)
    std::uint64_t delivered = 0;                         // handed out by next(): [0, delivered)
    std::uint64_t received = 0;                          // arrived without a gap: [0, received)
    std::map<std::uint64_t, detail::payload_ref> early;  // arrived past a gap (over another stream)
    zmq::message_t identity;                             // the stream that spoke last: where states go
    bool dirty = false;                                  // acknowledged more since its last state
  };

  void receive_some() {
    zmq::message_t identity, frame;
    // Bounded, so a flood on the socket does not starve the application.
    for (int n = 0; n < 4096; ++n) {
      if (link_.capped() && link_.wait(std::chrono::steady_clock::now()) > std::chrono::steady_clock::duration::zero())
        return;
      if (!socket_.recv(identity, zmq::recv_flags::dontwait)) return;
      if (!identity.more()) {
        ++stats_.malformed;
        continue;
      }
      (void)socket_.recv(frame, zmq::recv_flags::none);  // the rest of a message is already here
      if (frame.more()) {                                // a multipart message: not ours; take its parts off the socket
        zmq::message_t rest;
        do (void)socket_.recv(rest, zmq::recv_flags::none);
        while (rest.more());
        ++stats_.malformed;
        continue;
      }
      if (link_.capped()) link_.take(frame.size(), std::chrono::steady_clock::now());
      handle(identity, std::move(frame));
    }
  }

  void handle(zmq::message_t& identity, zmq::message_t frame) {
    const auto h = detail::decode({static_cast<const std::byte*>(frame.data()), frame.size()});
    if (!h || h->kind == detail::frame_kind::state) {
      ++stats_.malformed;
      return;
    }
    auto it = peers_.find(h->producer);
    if (it == peers_.end()) {
      if (peers_.size() >= options_.max_producers) {
        ++stats_.malformed;
        return;
      }
      it = peers_.emplace(h->producer, peer{}).first;
    }
    peer& pr = it->second;
    pr.identity.copy(identity);
    if (h->kind == detail::frame_kind::hello) {
      const std::uint64_t producer_acked = h->field[0];
      if (producer_acked > pr.received) {
        // The producer saw acknowledgements this consumer does not have.
        if (journal_ || pr.delivered > pr.acked) {
          ++stats_.stale_journal;  // a journal that lost them: refuse to guess
        } else {
          // No journal: a restarted consumer takes what was acknowledged as consumed.
          pr.acked = pr.delivered = pr.received = producer_acked;
          pr.early.erase(pr.early.begin(), pr.early.lower_bound(producer_acked));
          drain_early(h->producer, pr);
        }
      }
      send_state(h->producer, pr, true);
      return;
    }
    if (h->kind == detail::frame_kind::batch) {
      const auto at = detail::batch_samples({static_cast<const std::byte*>(frame.data()), frame.size()}, *h);
      if (!at) {
        ++stats_.malformed;
        return;
      }
      const auto message = std::make_shared<const zmq::message_t>(std::move(frame));
      for (std::size_t i = 0; i < at->size(); ++i)
        take(h->producer, pr, h->field[0] + i, {message, (*at)[i].first, (*at)[i].second});
      return;
    }
    const std::size_t size = frame.size() - detail::header_bytes;
    take(h->producer, pr, h->field[0],
         {std::make_shared<const zmq::message_t>(std::move(frame)), detail::header_bytes, size});
  }

  // One sample off the wire, alone or from a batch: a duplicate or past the window is counted and dropped.
  void take(std::uint32_t id, peer& pr, std::uint64_t offset, detail::payload_ref bytes) {
    if (offset < pr.received || pr.early.contains(offset)) {
      ++stats_.duplicates;
      return;
    }
    if (offset - pr.acked >= options_.window) {
      ++stats_.beyond_window;
      return;
    }
    ++stats_.received;
    stats_.payload_bytes += bytes.size;
    if (offset != pr.received) {
      pr.early.emplace(offset, std::move(bytes));
    } else {
      ready_.push_back(sample(id, offset, std::move(bytes)));
      ++pr.received;
      drain_early(id, pr);
    }
    stats_.max_in_hand =
        std::max(stats_.max_in_hand, static_cast<std::size_t>(pr.received - pr.delivered) + pr.early.size());
  }

  // Moves the samples that now follow without a gap to the ready queue.
  void drain_early(std::uint32_t id, peer& pr) {
    for (auto e = pr.early.begin(); e != pr.early.end() && e->first == pr.received; e = pr.early.erase(e)) {
      ready_.push_back(sample(id, e->first, std::move(e->second)));
      ++pr.received;
    }
  }

  void send_state(std::uint32_t id, peer& pr, bool reply) {
    if (pr.identity.size() == 0) return;  // never heard from: nowhere to send
    zmq::message_t m(detail::header_bytes);
    detail::frame_header h;
    h.kind = detail::frame_kind::state;
    h.flags = reply ? detail::flag_reply_to_hello : 0;
    h.producer = id;
    h.field = {pr.acked, pr.received, epoch_, options_.window};
    detail::encode(h,
                   std::span<std::byte, detail::header_bytes>(static_cast<std::byte*>(m.data()), detail::header_bytes));
    zmq::message_t to;
    to.copy(pr.identity);
    // A full or vanished peer loses the state; it asks again after its probe interval.
    if (socket_.send(to, zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      (void)socket_.send(m, zmq::send_flags::dontwait);
  }

  consumer_options options_;
  zmq::socket_t socket_;
  std::unique_ptr<ack_journal> journal_;
  std::uint64_t epoch_ = 0;
  rate_cap link_;
  std::unordered_map<std::uint32_t, peer> peers_;
  std::deque<sample> ready_;
  std::size_t unflushed_ = 0;
  std::size_t unflushed_bytes_ = 0;
  consumer_stats stats_;
};

}  // namespace trinity::stream
