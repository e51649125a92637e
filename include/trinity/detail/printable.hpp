#pragma once
//! \file
//! Text that came from outside (a key, a name, a trace line) made safe to print to a terminal: a control byte
//! (ESC, which starts a terminal escape sequence, BEL, NUL, a carriage return that would overwrite the line
//! before it) is written as \xNN; line feeds and tabs are kept, as are the bytes of UTF-8.
//!
//!   std::cerr << "trinity: " << trinity::detail::printable(e.what()) << '\n';

#include <string>
#include <string_view>

namespace trinity::detail {

inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace trinity::detail
