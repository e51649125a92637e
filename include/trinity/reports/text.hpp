#pragma once
//! \file
//! Plain text for terminals, shared by every printed plan and report: left-aligned tables, and numbers with a
//! fixed count of decimals or of significant digits.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace trinity::reports {

//! `v` with `digits` decimals, as printf's %.*f writes it.
inline std::string fixed(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

//! `v` with at most `digits` significant digits, as printf's %.*g writes it.
inline std::string significant(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

//! `v` rounded to a whole number, its thousands grouped: 161420.7 is "161,421" (a count a reader compares).
inline std::string whole_grouped(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string digits = buf, out;
  const std::size_t sign = !digits.empty() && digits[0] == '-';
  for (std::size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (sign ? "-" : "") + out;
}

//! `v` as a signed percentage with one decimal: 0.123 is "+12.3%", an error's sign kept.
inline std::string signed_percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v * 100);
  return buf;
}

//! Left-aligned columns for terminal output.
class table {
 public:
  explicit table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os) const {
    std::vector<std::size_t> width;
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const auto& r = rows_[k];
      for (std::size_t i = 0; i < r.size(); ++i) {
        os << r[i];
        if (i + 1 < r.size()) os << std::string(width[i] - r[i].size() + 2, ' ');
      }
      os << '\n';
      if (k == 0) {
        std::size_t total = 0;
        for (std::size_t i = 0; i < width.size(); ++i) total += width[i] + (i + 1 < width.size() ? 2 : 0);
        os << std::string(total, '-') << '\n';
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace trinity::reports
