#pragma once
//! \file
//! The MPI backend: ranks are processes, on one node or many, started by
//! mpirun. Point-to-point messages are MPI_Isend/MPI_Irecv on a duplicate of
//! the caller's communicator (so trinity's messages never meet the
//! application's), polled against a deadline, so a peer that never arrives
//! ends in comm::timeout_error instead of a hang.
//!
//! Fast path: when every rank shares one node, all_reduce goes through an
//! MPI-3 shared-memory window (MPI_Win_allocate_shared) instead of messages.
//! Each rank stages its data in its own segment; for large blocks rank r
//! reduces chunk r by reading its peers' segments directly and the others
//! copy the result out; small blocks every rank reduces whole. Flags in the
//! window, release-stored and acquire-loaded, replace barriers; a small block
//! costs one synchronization (its count rides with it). Every element is
//! reduced in the ring's order for its chunk of comm::partition(count, n):
//! x_{c+1}, x_{c+2}, ..., x_c. So the window, the ring all-reduce and the ring
//! reduce-scatter give the same bits, on every rank and every run.
//!
//!   trinity::mpi::environment env(argc, argv);
//!   trinity::mpi::communicator c;                       // MPI_COMM_WORLD
//!   comm::all_reduce(c, std::span<float>(grad), comm::reduce_op::sum);

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <trinity/backends/mpi/detail/c_api.hpp>
#include <trinity/comm/collectives.hpp>
#include <trinity/comm/detail/workspace.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::mpi {

struct options {
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
  //! Use the shared-memory window when every rank is on one node.
  bool shared_memory = true;
  //! Bytes staged per rank and block; a larger message goes through in blocks.
  std::size_t block_bytes = std::size_t{4} << 20;
  //! Blocks up to this size are reduced whole by every rank (one synchronisation instead of two).
  std::size_t small_block_bytes = std::size_t{64} << 10;
};

class communicator {
 public:
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "mpi";
  using clock = std::chrono::steady_clock;

  explicit communicator(MPI_Comm parent = MPI_COMM_WORLD, options opts = {}) : opts_(opts) {
    trinity::detail::require(opts.timeout.count() > 0, "timeout", "must be positive");
    trinity::detail::require(opts.block_bytes >= 4096 && opts.block_bytes % 64 == 0, "block_bytes",
                             "must be at least 4096 and a multiple of 64");
    check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    if (opts.shared_memory && size_ > 1) open_window();
  }
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  ~communicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (window_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(window_);
      MPI_Win_free(&window_);
    }
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
    MPI_Comm_free(&comm_);
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  //! Whether MPI may be called from a thread other than the one that initialised it, one at a time
  //! (MPI_THREAD_SERIALIZED or more): what comm::progress_engine asks before taking the communicator.
  [[nodiscard]] bool serialized_threads() const {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return level >= MPI_THREAD_SERIALIZED;
  }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return sent_; }
  //! True when all_reduce takes the shared-memory path.
  [[nodiscard]] bool shared_memory() const noexcept { return window_ != MPI_WIN_NULL; }
  [[nodiscard]] MPI_Comm native() const noexcept { return comm_; }

  void send(std::span<const std::byte> out, int dest) { exchange(out, dest, {}, -1); }
  void recv(std::span<std::byte> in, int source) { exchange({}, -1, in, source); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    exchange(out, dest, in, source);
  }

  //! The fast path comm::all_reduce prefers; off one node it picks the generic algorithm by size.
  template <comm::reducible T>
  void all_reduce(std::span<T> data, comm::reduce_op op) {
    if (size_ == 1) return;
    if (!shared_memory()) {
      if (data.size_bytes() < comm::small_message_bytes && size_ > 2)
        return comm::halving_doubling::all_reduce<communicator, T>(*this, data, op);
      return comm::ring::all_reduce<communicator, T>(*this, data, op);
    }
    refuse_if_broken();
    const std::size_t per_block = opts_.block_bytes / sizeof(T);
    const comm::partition whole(data.size(), size_);
    // Every block carries the whole count, so ranks that disagree learn it at the first block, not a hang.
    std::size_t lo = 0;
    do {
      shared_block<T>(data, lo, std::min(per_block, data.size() - lo), whole, op);
      lo += per_block;
    } while (lo < data.size());
  }

 private:
  // Control words at the front of each rank's segment. The count words share the arrival flag's cache line, so
  // a peer that sees the flag has the counts in the same fetch; the done flag has a line of its own.
  static constexpr std::size_t arrived_at = 0, count_at = 8, done_at = 64, control_bytes = 256;

  static void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(rc, text, &len);
      throw std::runtime_error(std::string("trinity::mpi: ") + what +
                               " failed: " + std::string(text, static_cast<std::size_t>(len)));
    }
  }

  void open_window() {
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_), "MPI_Comm_split_type");
    int node_size = 0;
    MPI_Comm_size(node_, &node_size);
    if (node_size != size_) {  // ranks on several nodes: messages only
      MPI_Comm_free(&node_);
      return;
    }
    if (static_cast<unsigned>(node_size) <= std::max(1u, std::thread::hardware_concurrency())) max_spins_ = 2048;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each segment on its owner's NUMA node
    std::byte* base = nullptr;
    const std::size_t segment = control_bytes + 2 * opts_.block_bytes;  // two slots: block k uses slot k % 2
    check(MPI_Win_allocate_shared(static_cast<MPI_Aint>(segment), 1, info, node_, &base, &window_),
          "MPI_Win_allocate_shared");
    MPI_Info_free(&info);
    segments_.resize(static_cast<std::size_t>(size_));
    for (int q = 0; q < size_; ++q) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* p = nullptr;
      MPI_Win_shared_query(window_, q, &bytes, &unit, &p);
      segments_[static_cast<std::size_t>(q)] = static_cast<std::byte*>(p);
    }
    std::memset(base, 0, control_bytes);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
    MPI_Barrier(node_);  // every segment's control words are zero before anyone raises one
  }

  std::atomic_ref<std::uint64_t> word(int q, std::size_t at) const {
    return std::atomic_ref<std::uint64_t>(
        *reinterpret_cast<std::uint64_t*>(segments_[static_cast<std::size_t>(q)] + at));
  }
  std::byte* slot(int q, std::uint64_t seq) const {
    return segments_[static_cast<std::size_t>(q)] + control_bytes + (seq % 2) * opts_.block_bytes;
  }

  static void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void refuse_if_broken() const {
    if (broken_) throw comm::peer_failed("the communicator failed earlier (" + why_ + "); create a new one");
  }
  [[noreturn]] void fail_timeout(const std::string& why) {
    broken_ = true;
    why_ = why;
    throw comm::timeout_error(why);
  }

  // Waits until every other rank's word at `at` reaches `seq`.
  void wait_all(std::size_t at, std::uint64_t seq, const char* stage) {
    const auto deadline = clock::now() + opts_.timeout;
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      const auto w = word(q, at);
      for (unsigned spins = 0; w.load(std::memory_order_acquire) < seq; ++spins) {
        // A peer on its own core is a few hundred nanoseconds away: spin (politely) that long before giving up
        // the core, which an oversubscribed run (more ranks than cores) needs for the others to run.
        if (spins < max_spins_) {
          spin_pause();
          continue;
        }
        std::this_thread::yield();
        if ((spins & 255) == 0 && clock::now() > deadline)
          fail_timeout("rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " waited " +
                       std::to_string(opts_.timeout.count()) + " ms for rank " + std::to_string(q) + " to " + stage +
                       " (shared-memory block " + std::to_string(seq) +
                       "), and it never did. Fix: every rank must "
                       "call the same collectives in the same order; raise options::timeout if a rank is merely slow");
      }
    }
  }

  // Raises my arrival at `seq` with the whole count beside it, waits for every peer's, and checks theirs.
  void arrive(std::uint64_t seq, std::size_t count) {
    // Two count words, by parity: a peer still reading the last block's count is never overwritten.
    const std::size_t at = count_at + (seq % 2) * sizeof(std::uint64_t);
    word(rank_, at).store(count, std::memory_order_relaxed);
    word(rank_, arrived_at).store(seq, std::memory_order_release);
    wait_all(arrived_at, seq, "arrive");
    for (int q = 0; q < size_; ++q) {
      const std::uint64_t theirs = word(q, at).load(std::memory_order_relaxed);
      if (theirs != count) {
        broken_ = true;
        why_ = "count mismatch";
        throw invalid_input("count", "rank " + std::to_string(q) + " passed " + std::to_string(theirs) +
                                         " elements where rank " + std::to_string(rank_) + " passed " +
                                         std::to_string(count) + ". Fix: every rank must pass the same count");
      }
    }
  }

  // data[base, base + len) is one block; its elements reach peers through the slots.
  template <class T>
  void shared_block(std::span<T> data, std::size_t base, std::size_t len, const comm::partition& whole,
                    comm::reduce_op op) {
    const std::uint64_t seq = ++seq_;
    const std::size_t bytes = len * sizeof(T);
    T* block = data.data() + base;
    if (bytes <= opts_.small_block_bytes) {
      // Everyone stages the whole block, then everyone reduces it whole: one synchronization.
      if (bytes) std::memcpy(slot(rank_, seq), block, bytes);
      sent_ += bytes;
      arrive(seq, data.size());
      reduce_in_ring_order(data, base, base, base + len, seq, whole, op);
      return;
    }
    const comm::partition part(len, size_);
    const std::size_t mine_lo = part.begin(rank_), mine_hi = part.end(rank_);
    // Stage what the others reduce: everything but my own chunk of the block.
    std::byte* my_slot = slot(rank_, seq);
    std::memcpy(my_slot, block, mine_lo * sizeof(T));
    std::memcpy(my_slot + mine_hi * sizeof(T), block + mine_hi, (len - mine_hi) * sizeof(T));
    sent_ += bytes - (mine_hi - mine_lo) * sizeof(T);
    arrive(seq, data.size());
    reduce_in_ring_order(data, base, base + mine_lo, base + mine_hi, seq, whole, op);
    std::memcpy(my_slot + mine_lo * sizeof(T), block + mine_lo, (mine_hi - mine_lo) * sizeof(T));
    sent_ += (mine_hi - mine_lo) * sizeof(T);
    word(rank_, done_at).store(seq, std::memory_order_release);
    wait_all(done_at, seq, "finish its chunk");
    for (int q = 0; q < size_; ++q)
      if (q != rank_)
        std::memcpy(block + part.begin(q), slot(q, seq) + part.begin(q) * sizeof(T), part.size(q) * sizeof(T));
  }

  // data[a, b) (absolute indices, inside the block that starts at `base`) = the ranks' values reduced in the
  // ring's order for each element's chunk c of `whole`: x_{c+1}, x_{c+2}, ..., x_c, left to right. My own
  // values come from data, the others' from their slots.
  template <class T>
  void reduce_in_ring_order(std::span<T> data, std::size_t base, std::size_t a, std::size_t b, std::uint64_t seq,
                            const comm::partition& whole, comm::reduce_op op) {
    while (a < b) {
      // The whole-data chunk holding a, and how much of [a, b) it covers.
      int c = 0;
      while (whole.end(c) <= a) ++c;
      const std::size_t hi = std::min(b, whole.end(c)), n = hi - a;
      const auto from = [&](int q) -> std::span<const T> {
        if (q == rank_) return std::span<const T>(data.data() + a, n);
        return std::span<const T>(reinterpret_cast<const T*>(slot(q, seq)) + (a - base), n);
      };
      // When my own values are among the first two operands, the sum can build in place (each element is read
      // before it is written); otherwise they are still needed later, so it builds apart.
      const int first = (c + 1) % size_;
      const bool in_place = rank_ == first || rank_ == (first + 1) % size_;
      const std::span<T> acc = in_place ? std::span<T>(data.data() + a, n) : comm::detail::workspace<T>(n);
      comm::combine<T>(from(first), from((first + 1) % size_), acc, op);
      for (int k = 2; k < size_; ++k) comm::combine<T>(acc, from((first + k) % size_), acc, op);
      if (!in_place) std::memcpy(data.data() + a, acc.data(), n * sizeof(T));
      a = hi;
    }
  }

  void exchange(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    refuse_if_broken();
    if (dest >= size_ || source >= size_)
      throw invalid_input(dest >= size_ ? "dest" : "source", "is not a rank of this communicator");
    // MPI counts are ints: move anything larger in pieces of 1 GiB.
    constexpr std::size_t piece = std::size_t{1} << 30;
    std::size_t done_out = 0, done_in = 0;
    do {
      const std::size_t o = dest >= 0 ? std::min(piece, out.size() - done_out) : 0;
      const std::size_t i = source >= 0 ? std::min(piece, in.size() - done_in) : 0;
      exchange_piece(out.subspan(done_out, o), dest, in.subspan(done_in, i), source);
      done_out += o;
      done_in += i;
    } while ((dest >= 0 && done_out < out.size()) || (source >= 0 && done_in < in.size()));
  }

  void exchange_piece(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    constexpr int tag = 0x7217;
    MPI_Request req[2];
    int k = 0;
    if (source >= 0)
      check(MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_BYTE, source, tag, comm_, &req[k++]), "MPI_Irecv");
    if (dest >= 0)
      check(MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, dest, tag, comm_, &req[k++]), "MPI_Isend");
    const auto deadline = clock::now() + opts_.timeout;
    MPI_Status status[2];
    for (unsigned spins = 0;; ++spins) {
      int flag = 0;
      const int rc = MPI_Testall(k, req, &flag, status);
      if (rc != MPI_SUCCESS) {
        if (source >= 0 && status[0].MPI_ERROR == MPI_ERR_TRUNCATE) {
          broken_ = true;
          why_ = "count mismatch";
          throw invalid_input("count", "rank " + std::to_string(source) + " sent more than the " +
                                           std::to_string(in.size()) + " bytes rank " + std::to_string(rank_) +
                                           " expected. Fix: every rank must pass the same count");
        }
        check(rc, "MPI_Testall");
      }
      if (flag) break;
      if (spins > 256) std::this_thread::yield();
      if ((spins & 255) == 255 && clock::now() > deadline) {
        for (int j = 0; j < k; ++j) {
          MPI_Cancel(&req[j]);
          MPI_Request_free(&req[j]);
        }
        const int peer = source >= 0 ? source : dest;
        fail_timeout("rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " waited " +
                     std::to_string(opts_.timeout.count()) + " ms for rank " + std::to_string(peer) +
                     ", and it never arrived. Fix: every rank must call the same collectives in the same order; "
                     "raise options::timeout if a rank is merely slow");
      }
    }
    if (source >= 0) {
      int got = 0;
      MPI_Get_count(&status[0], MPI_BYTE, &got);
      if (static_cast<std::size_t>(got) != in.size()) {
        broken_ = true;
        why_ = "count mismatch";
        throw invalid_input("count", "rank " + std::to_string(source) + " sent " + std::to_string(got) +
                                         " bytes where rank " + std::to_string(rank_) + " expected " +
                                         std::to_string(in.size()) + ". Fix: every rank must pass the same count");
      }
    }
    sent_ += out.size();
  }

  options opts_;
  // Spins before yielding: long when every rank has a core of its own, short when they share.
  unsigned max_spins_ = 256;
  MPI_Comm comm_ = MPI_COMM_NULL, node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<std::byte*> segments_;
  int rank_ = 0, size_ = 1;
  std::uint64_t seq_ = 0, sent_ = 0;
  bool broken_ = false;
  std::string why_;
};

}  // namespace trinity::mpi
