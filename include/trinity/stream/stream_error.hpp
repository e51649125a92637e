#pragma once
//! \file
//! stream_error: what stream:: throws when the far side does not answer in time
//! or what it keeps on disk cannot be read (journal_error). Bad arguments are
//! trinity::invalid_input, as everywhere else.

#include <stdexcept>

namespace trinity::stream {

class stream_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace trinity::stream
