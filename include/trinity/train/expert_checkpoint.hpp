#pragma once
//! \file
//! Where trinity-train's checkpoints keep a mixture's experts, and how a run of another split reads them back.
//! Beside the dense layers' files: the router's states in `router`, tensor rank t of tp's slice of the shared
//! experts in shared-experts-slice-<t>-of-<tp>, and each expert-data-parallel group's experts in the directory of
//! its expert-parallel rank e and expert-tensor slice t, experts-<e>-of-<ep>-slice-<t>-of-<etp>, one expert a
//! layer. A run loads them at any ep, etp, tp and number of replicas: each expert found at the rank that saved it,
//! slices saved over another number of ranks joined and re-cut (shard::recut).

#include <cstddef>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/shard/checkpoint.hpp>
#include <trinity/shard/layer_values.hpp>
#include <trinity/train/detail/directory_numbers.hpp>
#include <trinity/train/moe_parameters.hpp>

namespace trinity::train {

//! A checkpoint's experts (moe_block::save): the expert-parallel size and expert-tensor slices they were saved
//! at, from the names of their directories, experts-<e>-of-<ep>-slice-<t>-of-<etp>; none where it holds none.
struct saved_experts {
  std::size_t ep = 0, etp = 0;
};
inline std::string experts_directory(std::size_t e, std::size_t ep, std::size_t t, std::size_t etp) {
  return "experts-" + std::to_string(e) + "-of-" + std::to_string(ep) + "-slice-" + std::to_string(t) + "-of-" +
         std::to_string(etp);
}
//! Where a checkpoint keeps tensor rank t's slice of the shared experts, saved over tp ranks.
inline std::string shared_experts_directory(std::size_t t, std::size_t tp) {
  return "shared-experts-slice-" + std::to_string(t) + "-of-" + std::to_string(tp);
}

inline std::optional<saved_experts> experts_saved_in(const std::filesystem::path& dir) {
  std::optional<saved_experts> found;
  if (!std::filesystem::is_directory(dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string n = entry.path().filename().string();
    // The first expert-parallel rank's first slice names the layout, experts-0-of-<ep>-slice-0-of-<etp>; any
    // other name is of no concern here.
    const auto k = detail::numbers_in(n, {"experts-0-of-", "-slice-0-of-"});
    if (!k) continue;
    const std::size_t ep = (*k)[0], etp = (*k)[1];
    if (found && (found->ep != ep || found->etp != etp))
      throw invalid_input("checkpoint", dir.string() + " holds experts saved at two layouts (--ep " +
                                            std::to_string(found->ep) + " --etp " + std::to_string(found->etp) +
                                            ", and --ep " + std::to_string(ep) + " --etp " + std::to_string(etp) +
                                            "). Fix: save each run into a directory of its own");
    found = saved_experts{ep, etp};
  }
  return found;
}

//! The tensor-parallel size the shared experts in `dir` were saved at: 0 where it holds none.
inline std::size_t shared_experts_saved_in(const std::filesystem::path& dir) {
  std::size_t saved = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (const auto k = detail::numbers_in(entry.path().filename().string(), {"shared-experts-slice-0-of-"})) {
      if (saved > 0 && saved != (*k)[0])
        throw invalid_input("checkpoint", dir.string() + " holds shared experts saved at two layouts (--tp " +
                                              std::to_string(saved) + " and " + std::to_string((*k)[0]) +
                                              "). Fix: save each run into a directory of its own");
      saved = (*k)[0];
    }
  return saved;
}

//! Which of a block's routed experts a rank loads: the block's shape, and where this rank sits in its groups.
struct routed_experts_place {
  std::size_t experts, hidden, ffn_hidden;  //!< the block's shape
  std::size_t ep, etp;                      //!< this run's split
  std::size_t ep_rank, etp_rank;            //!< this rank's expert-parallel rank and slice
};

namespace detail {
//! The checkpoint's experts checked against the run's shape: refused, naming the flag, where they cannot be its.
inline void check_saved_experts(const std::filesystem::path& dir, const std::optional<saved_experts>& saved,
                                const routed_experts_place& at) {
  if (!saved)
    throw invalid_input("--load-checkpoint", dir.string() +
                                                 " holds no experts: it was saved without --experts. Fix: load it "
                                                 "without --experts, or a checkpoint of a run with them");
  if (at.experts % saved->ep != 0)
    throw invalid_input("--experts", "the checkpoint in " + dir.string() + " spread its experts over " +
                                         std::to_string(saved->ep) + " ranks, which do not split this run's " +
                                         std::to_string(at.experts) + ". Fix: --experts as saved");
  // The count comes from a directory's name: bounded by the width it splits before a slice is looked for.
  if (at.ffn_hidden % saved->etp != 0)
    throw invalid_input("--expert-width", "the checkpoint in " + dir.string() + " split each expert over " +
                                              std::to_string(saved->etp) + " ranks, which do not split this " +
                                              "run's expert width, " + std::to_string(at.ffn_hidden) +
                                              ": it is of another model. Fix: --expert-width as saved");
}

//! The readers of a checkpoint's expert pieces, opened once each as experts ask for them: expert e's slice s.
class expert_readers {
 public:
  expert_readers(std::filesystem::path dir, saved_experts saved, const routed_experts_place& at)
      : dir_(std::move(dir)),
        saved_(saved),
        per_(at.experts / saved.ep),
        count_(2 * at.ffn_hidden / saved.etp * at.hidden) {}
  [[nodiscard]] std::size_t per_rank() const noexcept { return per_; }
  const shard::checkpoint_reader& slice(std::size_t e, std::size_t s) {
    const std::size_t r = e / per_;
    auto it = readers_.find({r, s});
    if (it == readers_.end())
      it = readers_.emplace(std::pair{r, s}, dir_ / experts_directory(r, saved_.ep, s, saved_.etp)).first;
    if (it->second.layers() != per_ || it->second.layer_size(e % per_) != count_)
      throw invalid_input("--load-checkpoint", "expert " + std::to_string(e) + "'s slice " + std::to_string(s) +
                                                   " in " + dir_.string() + " is not this run's (" +
                                                   std::to_string(count_) +
                                                   " values: --width, --expert-width, --experts). Fix: the "
                                                   "block's shape as saved");
    return it->second;
  }

 private:
  std::filesystem::path dir_;
  saved_experts saved_;
  std::size_t per_, count_;
  std::map<std::pair<std::size_t, std::size_t>, shard::checkpoint_reader> readers_;  // by saved rank, slice
};
}  // namespace detail

//! Restores this rank's routed experts (`states`, one expert a layer, over its expert-data-parallel group where it
//! is rank `edp_rank`) from checkpoint `dir`, saved at any ep and etp: expert e is layer e mod E/ep' of the
//! directories of rank e / (E/ep') of the ep' it was saved at, one a slice; slices saved over another etp are
//! joined and re-cut. Returns the steps the experts had taken.
template <class States>
long load_routed_experts(const std::filesystem::path& dir, States& states, int edp_rank,
                         const routed_experts_place& at) {
  const auto saved = experts_saved_in(dir);
  detail::check_saved_experts(dir, saved, at);
  detail::expert_readers readers(dir, *saved, at);
  const std::size_t per = readers.per_rank(), first = at.ep_rank * (at.experts / at.ep), t = at.etp_rank;
  if (saved->etp == at.etp)
    return shard::load_layers(states, edp_rank, [&](std::size_t q) {
      const std::size_t e = first + q;
      return std::pair{&readers.slice(e, t), e % per};
    });
  const auto cut = [&](std::size_t ranks, std::size_t rank) {
    return expert_slice_indices(at.hidden, at.ffn_hidden, ranks, rank);
  };
  return shard::load_layers(states, edp_rank, [&](std::size_t q) {
    const std::size_t e = first + q;
    std::vector<shard::layer_values> slices;
    for (std::size_t s = 0; s < saved->etp; ++s) {
      slices.push_back(readers.slice(e, s).values(e % per));
      if (slices.back().steps != slices.front().steps)
        throw invalid_input("checkpoint", "expert " + std::to_string(e) + "'s slices in " + dir.string() +
                                              " had taken " + std::to_string(slices.front().steps) + " and " +
                                              std::to_string(slices.back().steps) +
                                              " steps: they come from different runs");
    }
    return shard::recut(slices, 2 * at.ffn_hidden * at.hidden, cut, at.etp, t);
  });
}

//! Restores tensor rank t of tp's slice of the shared experts (`states`, one layer, over the ranks holding the
//! same slice, where this one is `weights_rank`), `width` their fused width, saved over `saved` tensor ranks
//! (shared_experts_saved_in, at least 1): slices saved over another number are joined and re-cut. Returns the
//! steps they had taken.
template <class States>
long load_shared_experts(const std::filesystem::path& dir, States& states, int weights_rank, std::size_t saved,
                         std::size_t hidden, std::size_t width, std::size_t tp, std::size_t t) {
  const std::size_t count = 2 * width * hidden;
  if (width % saved != 0)
    throw invalid_input("--shared-experts", "the checkpoint in " + dir.string() + " split the shared experts over " +
                                                std::to_string(saved) + " ranks, which do not split this run's " +
                                                std::to_string(width) +
                                                " features: it is of another model. Fix: --shared-experts and "
                                                "--expert-width as saved");
  std::deque<shard::checkpoint_reader> readers;
  for (std::size_t s = 0; s < saved; ++s) {
    readers.emplace_back(dir / shared_experts_directory(s, saved));
    if (readers.back().layers() != 1 || readers.back().layer_size(0) != count / saved)
      throw invalid_input("--load-checkpoint", "the shared experts' slice " + std::to_string(s) + " in " +
                                                   dir.string() + " is not this run's (" +
                                                   std::to_string(count / saved) +
                                                   " values: --width, --expert-width, --shared-experts). Fix: the "
                                                   "block's shape as saved");
  }
  if (saved == tp)
    return shard::load_layers(states, weights_rank, [&](std::size_t) {
      return std::pair<const shard::checkpoint_reader*, std::size_t>{&readers[t], 0};
    });
  std::vector<shard::layer_values> slices;
  for (auto& r : readers) slices.push_back(r.values(0));
  return shard::load_layers(states, weights_rank, [&](std::size_t) {
    return shard::recut(
        slices, count, [&](std::size_t n, std::size_t at) { return expert_slice_indices(hidden, width, n, at); }, tp,
        t);
  });
}

}  // namespace trinity::train
