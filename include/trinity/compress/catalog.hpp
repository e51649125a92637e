#pragma once
//! \file
//! The compressors by name: what `trinity calibrate` measures, what the
//! chooser picks among, and what examples/compressed_exchange races. Each name
//! is one static composition. The ones that need no library are here; the
//! lossless ones (zstd, lz4, delta) join them where
//! <trinity/compress/lossless/catalog.hpp> is included (trinity::compress),
//! and a user's own join with register_compressor:
//!
//!   inline const bool mine = compress::register_compressor(compress::named<my_codec>("mine", "what it does"));

#include <functional>
#include <mutex>
#include <ratio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/cast.hpp>
#include <trinity/compress/dgc.hpp>
#include <trinity/compress/error_feedback.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/sign.hpp>
#include <trinity/compress/topk.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

struct catalog_entry {
  std::string name;
  std::string_view what;
  std::function<any_compressor()> make;
};

//! A catalog entry for the compressor type C under `name`.
template <class C>
[[nodiscard]] catalog_entry named(std::string name, std::string_view what) {
  return {name, what, [name] { return any_compressor(name, C{}); }};
}

namespace detail {
inline std::vector<catalog_entry> codecs_without_a_library() {
  using percent = std::ratio<1, 100>;
  using permille = std::ratio<1, 1000>;
  return {
      named<identity>("identity", "the floats as they are"),
      named<bf16>("bf16", "round to bfloat16"),
      named<fp16>("fp16", "round to IEEE half"),
      named<error_feedback<int8>>("int8-ef", "absmax int8 per 128, error feedback"),
      named<error_feedback<int4>>("int4-ef", "absmax int4 per 128, error feedback"),
      named<qsgd<7>>("qsgd-7", "QSGD, 7 levels (4 bits), unbiased"),
      named<qsgd<127>>("qsgd-127", "QSGD, 127 levels (8 bits), unbiased"),
      named<error_feedback<sign<>>>("sign-ef", "1 bit + scale per 256, error feedback"),
      named<error_feedback<topk<percent>>>("topk-1%-ef", "exact top 1%, error feedback"),
      named<error_feedback<topk<permille>>>("topk-0.1%-ef", "exact top 0.1%, error feedback"),
      named<error_feedback<sampled_topk<percent>>>("sampled-topk-1%-ef", "sampled-threshold top 1%, error feedback"),
      named<error_feedback<sampled_topk<permille>>>("sampled-topk-0.1%-ef",
                                                    "sampled-threshold top 0.1%, error feedback"),
      named<dgc<permille>>("dgc-0.1%", "DGC: momentum correction, sampled top 0.1%"),
      named<powersgd<4>>("powersgd-4", "PowerSGD rank 4, warm start, error feedback"),
  };
}
struct catalog_store {
  std::mutex mutex;
  std::vector<catalog_entry> entries = codecs_without_a_library();
};
inline catalog_store& catalog_storage() {
  static catalog_store store;
  return store;
}
}  // namespace detail

//! Adds `e` to the catalog, after the entries already there. Register before any thread reads the catalog (an
//! inline variable's initializer, as <trinity/compress/lossless/catalog.hpp> does): catalog() hands out a
//! reference. The same name twice is refused (std::logic_error): a name picks one composition.
inline bool register_compressor(catalog_entry e) {
  auto& store = detail::catalog_storage();
  const std::lock_guard lock(store.mutex);
  for (const auto& known : store.entries)
    if (known.name == e.name)
      throw std::logic_error("trinity: the compressor name \"" + e.name +
                             "\" is registered already. Fix: register each composition under a name of its own");
  store.entries.push_back(std::move(e));
  return true;
}

//! Every registered compressor: those that need no library, in a fixed order, then the registered ones in the
//! order they registered.
[[nodiscard]] inline const std::vector<catalog_entry>& catalog() { return detail::catalog_storage().entries; }

//! A fresh compressor by catalog name; an unknown name is an error listing the known ones.
[[nodiscard]] inline any_compressor make_compressor(std::string_view name) {
  for (const auto& e : catalog())
    if (e.name == name) return e.make();
  std::string known;
  for (const auto& e : catalog()) known += (known.empty() ? "" : ", ") + e.name;
  throw invalid_input("compressor",
                      "\"" + std::string(name) + "\" is not a built-in compressor; choose one of " + known);
}

}  // namespace trinity::compress
