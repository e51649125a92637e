#pragma once
//! \file
//! The registry of workloads: one list of types modelling Workload (workloads/workload.hpp), from which every
//! command is one loop. A workload file's "type" picks its reader, a preset's name its workload, and a plan,
//! a simulation or a verification goes to the hooks of the type that read it.
//!
//!   auto w = workloads::read_workload(io::load("w.json"), system);      // any registered kind
//!   workloads::plan(request, system, w, std::cout);                     // its plan, text or JSON
//!
//! A new workload is one header beside these and one line in `registered` below.

#include <cstddef>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/data_curation.hpp>
#include <trinity/workloads/diffusion.hpp>
#include <trinity/workloads/edge.hpp>
#include <trinity/workloads/embedding_serve.hpp>
#include <trinity/workloads/hetero_train.hpp>
#include <trinity/workloads/rag_serve.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/serving.hpp>
#include <trinity/workloads/training.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::workloads {

//! A list of workload types, each checked against Workload with the diagnostic that says what it lacks.
template <class... W>
struct workload_list {
  static_assert((diagnose_workload<W>() && ...), "every registered workload models Workload (see above)");
};

//! Every workload the planner knows, by the "type" a file names. One line each.
using registered = workload_list<training,          // "training"
                                 diffusion,         // "diffusion"
                                 edge,              // "edge"
                                 serving,           // "llm-serve"
                                 hetero_train,      // "hetero-train"
                                 data_curation,     // "data-curation"
                                 rag_serve,         // "rag-serve"
                                 embedding_serve>;  // "embedding-serve"

template <class List>
class basic_any_workload;

//! Any registered workload's description, with the kind that reads, plans and simulates it.
template <class... W>
class basic_any_workload<workload_list<W...>> {
 public:
  template <class Kind>
  static basic_any_workload of(typename Kind::description d) {
    basic_any_workload a;
    a.value_.template emplace<typename Kind::description>(std::move(d));
    return a;
  }

  //! The file's "type": "training", "llm-serve", ...
  [[nodiscard]] std::string_view type() const {
    return std::visit([](const auto& d) { return kind_of<std::decay_t<decltype(d)>>::type; }, value_);
  }
  [[nodiscard]] const std::string& name() const {
    return std::visit([](const auto& d) -> const std::string& { return d.name; }, value_);
  }
  [[nodiscard]] const plan::assumptions& assumed() const {
    return std::visit([](const auto& d) -> const plan::assumptions& { return d.assumed; }, value_);
  }
  //! The description as the kind it is; a std::logic_error naming both kinds when it is another.
  template <class D>
  [[nodiscard]] D& as() {
    if (auto* d = std::get_if<D>(&value_)) return *d;
    throw std::logic_error("a " + std::string(type()) + " workload, not a " + std::string(kind_of<D>::type) + " one");
  }
  template <class D>
  [[nodiscard]] const D& as() const {
    return const_cast<basic_any_workload&>(*this).template as<D>();
  }
  template <class D>
  [[nodiscard]] bool is() const {
    return std::holds_alternative<D>(value_);
  }
  //! f(Kind{}, description&) for the kind this is.
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit([&](auto& d) -> decltype(auto) { return f(kind_of<std::decay_t<decltype(d)>>{}, d); }, value_);
  }

 private:
  template <class D, class K, class... Rest>
  static auto find_kind() {
    if constexpr (std::is_same_v<typename K::description, D>)
      return K{};
    else
      return find_kind<D, Rest...>();
  }
  template <class D>
  using kind_of = decltype(find_kind<D, W...>());

  std::variant<typename W::description...> value_;
};

using any_workload = basic_any_workload<registered>;

namespace detail {

template <class... W>
std::vector<std::string_view> types_of(workload_list<W...>) {
  return {W::type...};
}

template <class Any, class... W>
Any read_as(workload_list<W...>, std::string_view type, const io::json& j, const plan::system& s,
            const read_context& c) {
  std::optional<Any> out;
  ((type == W::type ? (out = Any::template of<W>(W::read(j, s, c)), true) : false) || ...);
  return std::move(*out);
}

template <class Any, class... W>
std::optional<Any> preset_of(workload_list<W...>, std::string_view name, const plan::system& s) {
  std::optional<Any> out;
  ((
       out = [&]() -> std::optional<Any> {
         if (auto d = W::preset(name, s)) return Any::template of<W>(std::move(*d));
         return std::nullopt;
       }(),
       out.has_value()) ||
   ...);
  return out;
}

template <class... W>
std::vector<std::string_view> preset_names_of(workload_list<W...>) {
  std::vector<std::string_view> out;
  (
      [&] {
        for (auto n : W::preset_names()) out.push_back(n);
      }(),
      ...);
  return out;
}

template <class... W>
std::vector<std::pair<std::string_view, std::string_view>> preset_types_of(workload_list<W...>) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  (
      [&] {
        for (auto n : W::preset_names()) out.emplace_back(n, W::type);
      }(),
      ...);
  return out;
}

}  // namespace detail

//! Every registered kind's "type".
template <class List = registered>
std::vector<std::string_view> workload_types() {
  return detail::types_of(List{});
}

//! A workload file's contents, read by its "type"'s reader and checked against the system it will run on. A file
//! without "type" is refused with the kinds there are: a kind guessed would read a serving file as training and
//! blame the wrong keys. A program with workloads of its own passes its own list.
template <class List = registered>
basic_any_workload<List> read_workload(const io::json& j, const plan::system& s, const read_context& c = {}) {
  if (!j.is_object()) io::fail("", "expected a workload (a JSON object), not " + io::kind_of(j));
  const auto types = workload_types<List>();
  if (!j.contains("type")) {
    std::string kinds;
    for (const auto t : types) kinds += (kinds.empty() ? "\"" : ", \"") + std::string(t) + "\"";
    io::fail("type", "missing: a workload names its kind, one of " + kinds +
                         ". Fix: add \"type\": \"training\" to train a model (trinity presets workloads lists a "
                         "preset of each kind)");
  }
  const std::string type = io::choice(j["type"], "type", types);
  return detail::read_as<basic_any_workload<List>>(List{}, type, j, s, c);
}

//! A preset by name, paired with the system (whose devices a preset without ranks takes); none if no kind has it.
template <class List = registered>
std::optional<basic_any_workload<List>> find_preset(std::string_view name, const plan::system& s) {
  return detail::preset_of<basic_any_workload<List>>(List{}, name, s);
}

//! Every kind's presets.
template <class List = registered>
std::vector<std::string_view> preset_names() {
  return detail::preset_names_of(List{});
}

//! Every kind's presets, each with its kind's "type": what `trinity presets workloads` lists.
template <class List = registered>
std::vector<std::pair<std::string_view, std::string_view>> preset_types() {
  return detail::preset_types_of(List{});
}

//! Whether a kind draws `--plot`'s picture: one that says `static constexpr bool draws_plot = true`.
template <class K>
inline constexpr bool draws_plot = requires {
  requires K::draws_plot;
};

//! The workload's plan, as text or (a.json) the plan JSON of docs/plan.schema.json. `--plot` on a kind that draws
//! no picture is refused, not ignored.
template <class List>
void plan(const request& a, const plan::system& s, basic_any_workload<List>& w, std::ostream& out) {
  w.visit([&](auto kind, auto& d) {
    using K = decltype(kind);
    if (!a.plot.empty() && !draws_plot<K>)
      throw bad_flag("--plot", a.plot,
                     "draws the plans of a training or rag-serve search; a \"" + std::string(K::type) +
                         "\" plan has no picture to draw. Fix: drop --plot (--json gives every candidate)");
    K::plan(a, s, d, out);
  });
}

//! The workload's chosen plan on the simulated fabric, beside what the planner predicted.
template <class List>
void simulate(const request& a, const plan::system& s, basic_any_workload<List>& w, std::ostream& out) {
  w.visit([&](auto kind, auto& d) { decltype(kind)::simulate(a, s, d, out); });
}

}  // namespace trinity::workloads
