#pragma once
// What every reader's fuzz target shares: the fuzzer's bytes go to one reader of outside input (a JSON file,
// a trace, a vector file, a wire frame, a journal, a checkpoint), which must either accept them or refuse them
// with its own error: trinity::invalid_input, naming the field, or the journal's journal_error. Any other
// exception (a JSON type_error, an out_of_range, a bad_alloc from a size it believed), a crash, a sanitizer
// report or a leak is a finding.

#include "fuzz_require.hpp"

#include <trinity/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace trinity::fuzz {

//! Runs read(); true when it accepted the bytes, false when it refused them with a Refusal.
template <class Refusal = trinity::invalid_input, class Read>
bool accept_or_refuse(Read&& read) {
  try {
    read();
    return true;
  } catch (const Refusal&) {
    return false;  // the right answer to bad bytes
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a reader threw something other than its refusal: %s\n", e.what());
    std::abort();
  }
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace trinity::fuzz
