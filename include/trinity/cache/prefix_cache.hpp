#pragma once
//! \file
//! The exact prefix cache of LLM serving (vLLM's automatic prefix caching,
//! SGLang's radix tree): the KV state of a token sequence is cached in
//! fixed-size blocks, in a tree where a block's parent is the block before it,
//! so a request reuses the longest cached prefix of whole blocks. Blocks in
//! use are reference-counted through leases and never evicted; when the
//! capacity is reached an unreferenced leaf goes, chosen by the eviction
//! policy (prefix_eviction): the least recently used (vLLM's and SGLang's
//! choice, the default), the least often inserted, or shared_prefix, which
//! knows the tree: a block on the prefix of two or more inserts counts as
//! `shared_horizon` operations younger than its last use, so a request's private
//! tail leaves before a prefix others reuse. Ties go to the older block, then
//! to the deeper one, so a parent never leaves before its child.
//! Each tenant's salt roots a tree of its own: tenants with different salts
//! never share a block, whatever their tokens.
//!
//!
//! Every cached block has an identity, a number below max_blocks() that stays
//! its own while it is cached and is reused only after it is evicted: the
//! physical block of a paged KV allocator, as vLLM's block table maps a
//! sequence's logical blocks to them. A lease lists its path's identities and
//! says which blocks its insert created (those whose KV must be computed).
//!
//!   cache::prefix_cache kv({.block_tokens = 16, .block_size = 2_MiB, .capacity = 8_GiB});
//!   auto hit = kv.match(tenant, prompt);        // hit.tokens() are cached; held until `hit` dies
//!   auto held = kv.insert(tenant, prompt);      // caches the rest of its whole blocks
//!   held.block_table();                         // physical block per logical block of the prompt
//!   held.created();                             // the last created() of them are new: fill their KV

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <trinity/cache/detail/child_index.hpp>
#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cache {

using token = std::uint32_t;
//! A cached block's identity: below max_blocks(), its own while cached.
using block_id = std::uint32_t;

//! Which unreferenced leaf leaves first.
enum class prefix_eviction_policy {
  lru,           //!< the least recently matched or inserted
  lfu,           //!< the fewest inserts through it, then the least recent
  shared_prefix  //!< as lru, but a block two or more inserts passed through counts shared_horizon younger
};

struct prefix_eviction {
  prefix_eviction_policy policy = prefix_eviction_policy::lru;
  //! For shared_prefix: how many operations (matches and inserts) a shared block's last use is moved ahead.
  //! The default, 1,000, was chosen on the Mooncake conversation trace (docs/serving.md shows the curve).
  std::uint64_t shared_horizon = 1000;
};

struct prefix_cache_config {
  std::size_t block_tokens = 16;  //!< tokens per block (vLLM's default block size)
  bytes block_size{};             //!< KV bytes one block holds
  bytes capacity{};               //!< bytes of blocks the cache may hold
  prefix_eviction eviction{};     //!< which unreferenced leaf leaves first
};

struct prefix_stats {
  std::uint64_t lookups = 0, lookup_tokens = 0, hit_tokens = 0, inserted_blocks = 0, evicted_blocks = 0;
  //! Share of looked-up tokens found cached.
  [[nodiscard]] double token_hit_rate() const noexcept {
    return lookup_tokens ? static_cast<double>(hit_tokens) / static_cast<double>(lookup_tokens) : 0.0;
  }
};

class prefix_cache {
  struct node {
    node* parent = nullptr;
    std::vector<token> block;
    std::uint64_t refs = 0, last_use = 0, salt = 0;
    std::uint64_t inserts = 0;   // inserts that passed through: how shared the block is
    std::uint32_t depth = 0;     // blocks above it, the root's children at 0
    std::uint32_t children = 0;  // cached blocks that extend it
    block_id id = 0;
    std::uint64_t chain = 0;  // detail::chain_hash of the blocks from the root to it
  };
  // The eviction order: the policy's priority, then the older, then the deeper (a parent never leaves before
  // its child); the block's identity only separates what nothing else can.
  struct idle_key {
    std::uint64_t priority, last_use, shallowness;
    block_id id;
    node* n;
    friend bool operator<(const idle_key& a, const idle_key& b) noexcept {
      if (a.priority != b.priority) return a.priority < b.priority;
      if (a.last_use != b.last_use) return a.last_use < b.last_use;
      if (a.shallowness != b.shallowness) return a.shallowness < b.shallowness;
      return a.id < b.id;
    }
  };

 public:
  //! References held on a path of blocks; released when the lease is destroyed. Must not outlive its cache.
  class lease {
   public:
    lease() = default;
    lease(lease&& o) noexcept
        : cache_(std::exchange(o.cache_, nullptr)),
          path_(std::move(o.path_)),
          ids_(std::move(o.ids_)),
          tokens_(o.tokens_),
          created_(o.created_) {}
    lease& operator=(lease&& o) noexcept {
      if (this != &o) {
        release();
        cache_ = std::exchange(o.cache_, nullptr);
        path_ = std::move(o.path_);
        ids_ = std::move(o.ids_);
        tokens_ = o.tokens_;
        created_ = o.created_;
      }
      return *this;
    }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() { release(); }

    [[nodiscard]] std::size_t blocks() const noexcept { return path_.size(); }
    [[nodiscard]] std::size_t tokens() const noexcept { return tokens_; }
    //! The identity of each block of the path, logical block 0 first: where its KV lives.
    [[nodiscard]] std::span<const block_id> block_table() const noexcept { return ids_; }
    //! How many blocks at the end of the path this lease's insert created (0 for a match).
    [[nodiscard]] std::size_t created() const noexcept { return created_; }
    void release() noexcept {
      if (cache_) cache_->unref(path_);
      cache_ = nullptr;
      path_.clear();
      ids_.clear();
    }

   private:
    friend class prefix_cache;
    lease(prefix_cache* c, std::vector<node*> path, std::size_t tokens, std::size_t created = 0)
        : cache_(c), path_(std::move(path)), tokens_(tokens), created_(created) {
      ids_.reserve(path_.size());
      for (const node* n : path_) ids_.push_back(n->id);
    }
    prefix_cache* cache_ = nullptr;
    std::vector<node*> path_;
    std::vector<block_id> ids_;
    std::size_t tokens_ = 0, created_ = 0;
  };

  explicit prefix_cache(prefix_cache_config c) : config_(c) {
    trinity::detail::require(c.block_tokens >= 1 && c.block_tokens <= 1 << 16, "block_tokens",
                             "must be from 1 to 65536");
    trinity::detail::require(c.block_size.value() > 0 && std::isfinite(c.block_size.value()), "block_size",
                             "must be a positive, finite number of bytes");
    trinity::detail::require(c.capacity.value() >= 0 && std::isfinite(c.capacity.value()), "capacity",
                             "must be a finite number of bytes, zero or more");
    max_blocks_ = static_cast<std::uint64_t>(c.capacity.value() / c.block_size.value());
    trinity::detail::require(max_blocks_ <= (std::uint64_t{1} << 32), "capacity",
                             "holds more than 2^32 blocks of block_size, more than a block identity counts; "
                             "use larger blocks");
  }
  prefix_cache(const prefix_cache&) = delete;
  prefix_cache& operator=(const prefix_cache&) = delete;

  //! The longest cached prefix of whole blocks under this salt, held (and refreshed) until the lease dies.
  [[nodiscard]] lease match(std::uint64_t salt, std::span<const token> tokens) {
    ++stats_.lookups;
    stats_.lookup_tokens += tokens.size();
    std::vector<node*> path;
    const std::size_t whole = tokens.size() / config_.block_tokens;
    path.reserve(whole);
    if (const auto r = roots_.find(salt); r != roots_.end()) {
      node* at = r->second.get();
      // Every block's slot requested before the first is read: the walk then waits on memory once, not once
      // per block.
      chains_.resize(whole);
      std::uint64_t h = at->chain;
      for (std::size_t b = 0; b < whole; ++b) {
        h = detail::chain_hash(h, tokens.subspan(b * config_.block_tokens, config_.block_tokens));
        chains_[b] = h;
        edges_.prefetch(h);
      }
      for (std::size_t b = 0; b < whole; ++b) {
        node* child = edges_.find(at, tokens.subspan(b * config_.block_tokens, config_.block_tokens), chains_[b]);
        if (!child) break;
        at = child;
        path.push_back(at);
      }
    }
    const std::size_t matched = path.size() * config_.block_tokens;
    stats_.hit_tokens += matched;
    ref(path);
    return lease(this, std::move(path), matched);
  }

  //! Caches every whole block of tokens under this salt (those already cached are reused), evicting
  //! unreferenced leaves as needed, and holds the path. Stops early when nothing more can be evicted.
  [[nodiscard]] lease insert(std::uint64_t salt, std::span<const token> tokens) {
    auto& root = roots_[salt];
    if (!root) {
      root = std::make_unique<node>();
      root->salt = salt;
      root->chain = detail::chain_hash(0, std::span<const std::uint64_t>(&salt, 1));
    }
    node* at = root.get();
    guarded_root_ = at;  // eviction below must not drop the tree being walked
    const std::uint64_t now = ++clock_;
    std::vector<node*> path;
    std::size_t created = 0;
    for (std::size_t b = 0; (b + 1) * config_.block_tokens <= tokens.size(); ++b) {
      const auto block = tokens.subspan(b * config_.block_tokens, config_.block_tokens);
      const std::uint64_t h = detail::chain_hash(at->chain, block);
      node* child = edges_.find(at, block, h);
      if (!child) {
        if (blocks_ >= max_blocks_ && !evict_one()) break;  // every cached block is in use
        const block_id id = take_id();
        child = id < nodes_.size() ? &nodes_[id] : &nodes_.emplace_back();
        child->parent = at;
        child->salt = salt;
        child->refs = child->last_use = child->inserts = 0;
        child->depth = static_cast<std::uint32_t>(b);
        child->children = 0;
        child->block.assign(block.begin(), block.end());
        child->id = id;
        child->chain = h;
        edges_.insert(child, h);
        ++at->children;
        ++blocks_;
        ++created;
        ++stats_.inserted_blocks;
      }
      at = child;
      hold(at, now, true);  // held as we go, so later evictions cannot take the path
      path.push_back(at);
    }
    guarded_root_ = nullptr;
    if (root->children == 0) roots_.erase(salt);
    const std::size_t held = path.size() * config_.block_tokens;
    return lease(this, std::move(path), held, created);
  }

  [[nodiscard]] const prefix_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uint64_t blocks() const noexcept { return blocks_; }
  [[nodiscard]] bytes resident() const noexcept { return static_cast<double>(blocks_) * config_.block_size; }
  [[nodiscard]] std::uint64_t max_blocks() const noexcept { return max_blocks_; }
  [[nodiscard]] const prefix_cache_config& config() const noexcept { return config_; }
  //! Blocks no lease holds and no longer sequence extends: what eviction may take.
  [[nodiscard]] std::size_t evictable_blocks() const noexcept { return idle_.size(); }

 private:
  static bool evictable(const node* n) noexcept { return n->parent && n->refs == 0 && n->children == 0; }

  idle_key key_of(node* n) const noexcept {
    std::uint64_t priority = n->last_use;
    if (config_.eviction.policy == prefix_eviction_policy::lfu)
      priority = n->inserts;
    else if (config_.eviction.policy == prefix_eviction_policy::shared_prefix && n->inserts >= 2)
      priority += config_.eviction.shared_horizon;
    return {priority, n->last_use, std::numeric_limits<std::uint32_t>::max() - n->depth, n->id, n};
  }
  void hold(node* n, std::uint64_t now, bool inserting = false) {
    if (evictable(n)) idle_.erase(key_of(n));
    ++n->refs;
    n->last_use = now;
    n->inserts += inserting;
  }
  void ref(const std::vector<node*>& path) {
    const std::uint64_t now = ++clock_;
    for (node* n : path) hold(n, now);
  }
  void unref(const std::vector<node*>& path) noexcept {
    for (node* n : path) {
      --n->refs;
      if (evictable(n)) idle_.insert(key_of(n));
    }
  }
  // A free identity: the one evicted last, or the next never used; so every identity stays below max_blocks.
  block_id take_id() {
    if (!free_ids_.empty()) {
      const block_id id = free_ids_.back();
      free_ids_.pop_back();
      return id;
    }
    return next_id_++;
  }
  // Drops the idle leaf the policy names first; its parent may become one.
  bool evict_one() {
    if (idle_.empty()) return false;
    node* victim = idle_.begin()->n;
    idle_.erase(idle_.begin());
    node* parent = victim->parent;
    free_ids_.push_back(victim->id);
    edges_.erase(victim, victim->chain);
    victim->parent = nullptr;  // its slot waits in nodes_ for the identity's next block
    --parent->children;
    --blocks_;
    ++stats_.evicted_blocks;
    if (evictable(parent))
      idle_.insert(key_of(parent));
    else if (!parent->parent && parent->children == 0 && parent != guarded_root_)
      roots_.erase(parent->salt);  // an empty tenant tree
    return true;
  }

  prefix_cache_config config_;
  std::uint64_t max_blocks_ = 0, blocks_ = 0, clock_ = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<node>> roots_;  // a tenant's tree, by salt
  std::deque<node> nodes_;             // the cached blocks, by identity; a deque keeps their addresses
  detail::child_index<node> edges_;    // (parent, block) to child, for every tree
  std::vector<std::uint64_t> chains_;  // match's chain hashes, kept to spare an allocation per lookup
  std::set<idle_key> idle_;            // the evictable leaves, first to go first
  node* guarded_root_ = nullptr;
  std::vector<block_id> free_ids_;
  block_id next_id_ = 0;
  prefix_stats stats_;
};

}  // namespace trinity::cache
