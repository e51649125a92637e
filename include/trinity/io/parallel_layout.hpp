#pragma once
//! \file
//! A parallel layout written as the command line takes it:
//!   tp=8,pp=8,vpp=3,cp=1,dp=1,mbs=1,recompute=full|selective|none,recompute_layers=5,recompute_method=block|uniform,
//!   sp=on|off,zero=0..3,
//!   offload=on|off,codec=NAME|none,overlap=on|off,ep=8,etp=1,recompute_modules=layernorm+moe_act+mla_up_proj|none,
//!   dispatcher=alltoall|deepep,flushes=1,schedule=1f1b (model/pipeline_schedule.hpp),
//!   first_stage_layers=3,last_stage_layers=2  (or instead of those two: pipeline_layout=Et|(tt|)*30mL,
//!   model/pipeline_layout.hpp; the cosmetic commas Megatron's recipes write in it are taken: the items after it
//!   with no '=' continue it)
//! Every key is optional (a missing degree is 1, recompute none, recompute=full recomputing every layer,
//! recompute_layers counting the first layers of each chunk (the block method), sp off,
//! ZeRO 0, no offload, no gradient codec, overlap as the workload says, the all-to-all dispatcher, one pipeline
//! flush a step, the pipeline's layers split as
//! model::pipeline_stage_layers splits them, vpp as many chunks as pipeline_layout gives each stage); an
//! unknown key, a key given twice or a value that is not allowed is refused, naming it and what would be. A codec's
//! name is checked where its cost is looked up (plan::gradient_codec).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <trinity/detail/key_value_list.hpp>
#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/model/pipeline_layout.hpp>
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/plan/assumed.hpp>

namespace trinity::io {

namespace detail {
//! A layout's pipeline_layout, read: its form checked here (its fit to the model where it is priced,
//! model::check_layout), the stated-stage keys refused beside it, and vpp taken from its chunks unless given.
template <class Fail>
void settle_pipeline_layout(model::parallel_layout& l, bool vpp_given, const Fail& fail) {
  if (l.pipeline_layout.empty()) fail("pipeline_layout=: name the chunks, e.g. Et|(tt|)*30mL");
  std::size_t chunks = 0;
  try {
    chunks = model::parse_pipeline_layout(l.pipeline_layout).size();
  } catch (const invalid_input& e) {
    fail("pipeline_layout=" + e.problem());
  }
  if (const auto twice = model::check_stated_once(l)) fail(twice->message());
  if (!vpp_given && l.pp > 1 && chunks % l.pp == 0) l.vpp = chunks / l.pp;
}

//! `layernorm+moe_act`, or `none`: each module once, by its name.
template <class Fail>
model::recompute_modules parse_recompute_modules(const std::string& value, const Fail& fail) {
  model::recompute_modules out;
  if (value == "none") return out;
  std::string known;
  for (const auto& [name, m] : model::recompute_module_names) known += (known.empty() ? "" : ", ") + std::string(name);
  for (std::size_t at = 0; at <= value.size();) {
    const std::size_t end = std::min(value.find('+', at), value.size());
    const std::string_view item = std::string_view(value).substr(at, end - at);
    bool found = false;
    for (const auto& [name, m] : model::recompute_module_names)
      if (item == name) {
        if (out.has(m)) fail("recompute_modules=" + value + ": " + std::string(name) + " is named twice");
        out.add(m);
        found = true;
      }
    // Megatron-Core lists the attention core among its modules; here it is the layer policy, named as such.
    if (!found && item == "core_attn")
      fail("recompute_modules=" + value +
           ": core_attn is the attention core, which recompute=selective recomputes; give recompute=selective and "
           "drop core_attn");
    if (!found)
      fail("recompute_modules=" + value + ": '" + std::string(item) + "' is not a module; use " + known +
           ", joined by + (layernorm+moe_act), or none");
    at = end + 1;
  }
  return out;
}

//! The keys whose value is one of a few words (recompute, recompute_method, dispatcher, schedule) into `l`; false for
//! any other key.
template <class Fail>
bool parse_word_value(model::parallel_layout& l, const std::string& key, const std::string& value, const Fail& fail) {
  if (key == "recompute") {
    if (value == "none")
      l.recompute = model::recomputation::none;
    else if (value == "selective")
      l.recompute = model::recomputation::selective;
    else if (value == "full")
      l.recompute = model::recomputation::full;
    else
      fail("recompute=" + value + ": use none, selective or full");
    return true;
  }
  if (key == "recompute_method") {
    if (value != "block" && value != "uniform")
      fail("recompute_method=" + value +
           ": use block (each chunk's first recompute_layers layers) or uniform (every layer, in groups of "
           "recompute_layers)");
    l.recompute_method = value == "uniform" ? model::recompute_method::uniform : model::recompute_method::block;
    return true;
  }
  if (key == "dispatcher") {
    if (value != "alltoall" && value != "deepep")
      fail("dispatcher=" + value +
           ": use alltoall (a row a choice, Megatron-Core's alltoall dispatcher) or deepep (a token once a node "
           "and once a rank, DeepEP's and HybridEP's)");
    l.dispatcher = value == "deepep" ? model::token_dispatcher::by_node : model::token_dispatcher::all_to_all;
    return true;
  }
  if (key == "schedule") {
    if (value.empty() || !model::known_schedule(value))
      fail("schedule=" + value + ": use one of " + model::schedule_names() + " (model/pipeline_schedule.hpp)");
    l.schedule = value;
    return true;
  }
  return false;
}
}  // namespace detail

inline model::parallel_layout parse_parallel_layout(std::string_view text, const std::string& field = "parallelism") {
  // clang-format off
  static constexpr std::string_view keys[] = {"tp", "pp", "vpp", "cp", "dp", "mbs", "recompute", "sp", "zero",
                                              "offload", "codec", "overlap", "ep", "etp", "recompute_modules",
                                              "first_stage_layers", "last_stage_layers", "pipeline_layout",
                                              "recompute_layers", "recompute_method", "dispatcher", "flushes",
                                              "schedule"};
  // clang-format on
  model::parallel_layout l;
  const auto fail = [&](const std::string& why) -> void { throw invalid_input(field, why); };
  bool vpp_given = false, layout_given = false;
  trinity::detail::for_each_key_value(
      text, field, keys, {"tp=8,pp=4,dp=2", "tp=8", "", "pipeline_layout"},
      [&](const std::string& key, const std::string& value) {
        if (detail::parse_word_value(l, key, value, fail)) return;
        if (key == "recompute_modules") {
          l.modules = detail::parse_recompute_modules(value, fail);
          return;
        }
        if (key == "codec") {
          if (value.empty()) fail("codec=: name a gradient codec (e.g. int8-ef), or none");
          l.codec = value == "none" || value == "identity" ? "" : value;
          return;
        }
        if (key == "pipeline_layout") {
          l.pipeline_layout = value, layout_given = true;
          return;
        }
        if (key == "sp" || key == "offload" || key == "overlap") {
          if (value != "on" && value != "off") fail(key + "=" + value + ": use on or off");
          if (key == "overlap")
            l.overlap = value == "on";
          else
            (key == "sp" ? l.sequence_parallel : l.offload) = value == "on";
          return;
        }
        std::size_t n = 0, used = 0;
        for (const char ch : value) {
          if (ch < '0' || ch > '9' || n > 1'000'000) break;
          n = n * 10 + static_cast<std::size_t>(ch - '0');
          ++used;
        }
        if (value.empty() || used != value.size() || (n == 0 && key != "zero") || n > 1'000'000)
          fail(key + "=" + value + ": must be a whole number from " + (key == "zero" ? "0 to 3" : "1 to 1000000"));
        if (key == "tp")
          l.tp = n;
        else if (key == "pp")
          l.pp = n;
        else if (key == "vpp")
          l.vpp = n, vpp_given = true;
        else if (key == "cp")
          l.cp = n;
        else if (key == "dp")
          l.dp = n;
        else if (key == "mbs")
          l.micro_batch = n;
        else if (key == "ep")
          l.ep = n;
        else if (key == "etp")
          l.etp = n;
        else if (key == "first_stage_layers")
          l.first_stage_layers = n;
        else if (key == "last_stage_layers")
          l.last_stage_layers = n;
        else if (key == "recompute_layers")
          l.recompute_layers = n;
        else if (key == "flushes")
          l.flushes = n;
        else {
          if (n > 3) fail("zero=" + value + ": ZeRO has stages 0 to 3");
          l.zero_stage = static_cast<int>(n);
        }
      });
  if (layout_given) detail::settle_pipeline_layout(l, vpp_given, fail);
  return l;
}

//! The keys `text` leaves out, with the values parse_parallel_layout gave them (`l`): what pricing the layout
//! assumed (plan/assumed.hpp). `text` has been parsed already, so its items are well formed. `experts`: the
//! model is a mixture of experts, whose ep and etp the text may leave out too.
inline plan::assumptions parallel_layout_defaults(std::string_view text, const model::parallel_layout& l,
                                                  bool experts = false) {
  const auto given = [&](std::string_view key) {
    for (std::size_t at = 0; at <= text.size();) {
      const std::size_t end = std::min(text.find(',', at), text.size());
      const auto item = text.substr(at, end - at);
      if (item.substr(0, item.find('=')) == key) return true;
      at = end + 1;
    }
    return false;
  };
  plan::assumptions out;
  const auto note = [&](const char* key, const auto& value) {
    if (!given(key)) plan::assume(out, key, value);
  };
  note("tp", l.tp);
  note("pp", l.pp);
  if (l.pipeline_layout.empty()) note("vpp", l.vpp);  // else the layout's chunks gave it
  note("cp", l.cp);
  note("dp", l.dp);
  note("mbs", l.micro_batch);
  note("recompute", model::to_string(l.recompute));
  // Megatron-Core's full recomputation needs a method; left out here, it is every layer (uniform, 1 a group).
  if (l.recompute == model::recomputation::full && !l.recompute_layers) note("recompute_layers", "all");
  if (l.recompute_layers) note("recompute_method", model::to_string(l.recompute_method));
  note("sp", l.sequence_parallel ? "on" : "off");
  note("zero", l.zero_stage);
  note("offload", l.offload ? "on" : "off");
  note("codec", l.codec.empty() ? "none" : l.codec);
  // A pipeline runs a schedule; without one there is none to assume.
  if (l.pp > 1) note("schedule", std::string(model::schedule_name(l.schedule)));
  if (experts) {
    note("ep", l.ep);
    note("etp", l.etp);
    note("dispatcher", model::to_string(l.dispatcher));
  }
  // overlap left out is the workload's, which the workload's own assumptions list when it did not give it
  return out;
}

}  // namespace trinity::io
