#pragma once
//! \file
//! What a workload is to the planner: one type, registered once (workloads/registry.hpp), that carries
//! everything `trinity plan`, `simulate` and `verify` need of it, so that a new workload adds one file and one
//! registration line and no command changes.
//!
//!   struct my_workload {
//!     static constexpr std::string_view type = "my-kind";           // the file's "type"
//!     using description = plan::my_workload;                         // has .name and .assumed
//!     static description read(const io::json&, const plan::system&, const read_context&);  // strict reader
//!     static std::vector<std::string_view> preset_names();
//!     static std::optional<description> preset(std::string_view name, const plan::system&);
//!     static void plan(const request&, const plan::system&, description&, std::ostream&);      // text or JSON
//!     static void simulate(const request&, const plan::system&, description&, std::ostream&);  // or refuse
//!   };
//!
//! docs/architecture.md builds a complete one. `verify` runs a plan for real: a kind the library can run alone
//! adds `static void verify(const verify_request&, const plan::system&, description&, std::ostream&)`
//! (VerifiableWorkload, workloads/verify.hpp); one that needs the programs beside `trinity` (trinity-train) is run
//! by the command (tools/trinity/verify_command.cpp), one overload per kind, found by the same registry.

#include <concepts>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/request.hpp>

namespace trinity::workloads {

//! Where a workload file was read from: relative paths inside it (a trace) resolve against `base`; a reader
//! that does long work (replaying a trace) tells `progress`.
struct read_context {
  std::filesystem::path base;
  std::function<void(const std::string&)> progress;
};

//! What every planned workload's description carries: its name and the fields it took a default for.
template <class D>
concept WorkloadDescription = requires(const D& d) {
  { d.name } -> std::convertible_to<std::string>;
  { d.assumed } -> std::convertible_to<plan::assumptions>;
};

template <class W>
concept Workload = requires {
  { W::type } -> std::convertible_to<std::string_view>;
  typename W::description;
}
&&WorkloadDescription<typename W::description>&& requires(const io::json& j, const plan::system& s,
                                                          const read_context& c, typename W::description& d,
                                                          const request& a, std::ostream& out, std::string_view name) {
  { W::read(j, s, c) } -> std::same_as<typename W::description>;
  { W::preset_names() } -> std::convertible_to<std::vector<std::string_view>>;
  { W::preset(name, s) } -> std::same_as<std::optional<typename W::description>>;
  { W::plan(a, s, d, out) } -> std::same_as<void>;
  { W::simulate(a, s, d, out) } -> std::same_as<void>;
};

//! Why W is not a Workload, one requirement at a time, each with what to add (stdexec keeps its diagnostics
//! as such a table).
template <class W>
constexpr bool diagnose_workload() {
  if constexpr (!requires { W::type; }) {
    static_assert(
        requires { W::type; },
        "a Workload names its kind: add `static constexpr std::string_view type = \"my-kind\";` (the "
        "workload file's \"type\")");
    return false;
  } else if constexpr (!requires { typename W::description; }) {
    static_assert(
        requires { typename W::description; },
        "a Workload names what it reads: add `using description = ...;` (a struct with name and assumed)");
    return false;
  } else if constexpr (!WorkloadDescription<typename W::description>) {
    static_assert(WorkloadDescription<typename W::description>,
                  "a Workload's description needs `std::string name` and `plan::assumptions assumed` (the "
                  "defaults its reader took), which every plan prints");
    return false;
  } else if constexpr (!requires(const io::json& j, const plan::system& s, const read_context& c) {
                         { W::read(j, s, c) } -> std::same_as<typename W::description>;
                       }) {
    static_assert(sizeof(W) == 0,
                  "a Workload reads its file: add `static description read(const io::json&, const "
                  "plan::system&, const read_context&)` (an io::object with its key table)");
    return false;
  } else if constexpr (!requires(std::string_view n, const plan::system& s) {
                         { W::preset_names() } -> std::convertible_to<std::vector<std::string_view>>;
                         { W::preset(n, s) } -> std::same_as<std::optional<typename W::description>>;
                       }) {
    static_assert(sizeof(W) == 0,
                  "a Workload lists its presets: add `static std::vector<std::string_view> "
                  "preset_names()` and `static std::optional<description> preset(std::string_view, "
                  "const plan::system&)` (empty when it has none)");
    return false;
  } else if constexpr (!Workload<W>) {
    static_assert(Workload<W>,
                  "a Workload prints its plan and its simulation: add `static void plan(const "
                  "request&, const plan::system&, description&, std::ostream&)` and the same for "
                  "`simulate` (which may refuse with a usage_error saying why)");
    return false;
  } else {
    return true;
  }
}

}  // namespace trinity::workloads
