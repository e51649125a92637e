#pragma once
//! \file
//! Megatron-Core's --pipeline-model-parallel-layout, read as its PipelineParallelLayerLayout reads it: a string of
//! model chunks separated by `|`, each a run of marks, E the embedding, t a transformer layer, m a multi-token
//! prediction module and L the loss, with `x*n` repeating a mark and `(..)*n` a group (DeepSeek-V3's 8 stages of
//! 4 chunks: `Et|(tt|)*30mL`). Chunk c runs on pipeline rank c mod pp as its virtual stage c / pp, so a layout
//! of pp·vpp chunks fixes vpp. Megatron-Core's rules hold: E the first mark and L the last, each once, no layer
//! after a prediction module. One rule is trinity's: the step model prices prediction modules on the last stage,
//! beside the logits, so every m sits in the last chunk (Megatron-Core also lets them stand on a stage of their
//! own, and split the loss over stages). Commas are cosmetic and dropped, as Megatron-Core drops them: its
//! recipes write them (Llama 3 70B on 8 H100 stages: `Et*2|(t*2|)*34,t*3|(t*2|)*3,tL`), and a layout given in
//! a `key=value` list keeps them (io/parallel_layout.hpp).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/layout_violation.hpp>

namespace trinity::model {

//! What one model chunk of a layout builds.
struct pipeline_chunk {
  std::size_t layers = 0;       //!< transformer layers (t)
  std::size_t predictions = 0;  //!< multi-token prediction modules (m)
  bool embedding = false;       //!< E: the first chunk's first mark
  bool loss = false;            //!< L: the last chunk's last mark
  friend bool operator==(const pipeline_chunk&, const pipeline_chunk&) = default;
};

//! The most marks a layout may unroll to: far above any model's layers (DeepSeek-V3 has 61), and low enough
//! that a hostile `(t*999999|)*999999` is refused before it is built.
inline constexpr std::size_t pipeline_layout_marks_max = 100'000;

namespace detail {
//! `text` as an error may quote it: a byte outside printable ASCII as \xNN, so that hostile bytes reach no
//! terminal raw (and a NUL does not cut the message short).
inline std::string printable(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f)
      out += ch;
    else
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
  }
  return out;
}

//! The repeat count after a '*' at text[at]: digits, at least 1, at most pipeline_layout_marks_max.
inline std::size_t layout_repeat(std::string_view text, std::size_t& at, const std::string& field,
                                 std::string_view quoted, std::size_t offset) {
  const std::size_t start = at;
  const auto fail = [&](const std::string& why) { throw invalid_input(field, std::string(quoted) + ": " + why); };
  std::size_t n = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    n = n * 10 + static_cast<std::size_t>(text[at] - '0');
    ++at;
    if (n > pipeline_layout_marks_max)
      fail("a repeat past " + std::to_string(pipeline_layout_marks_max) + " at character " +
           std::to_string(offset + start + 1) + "; no model has that many layers");
  }
  if (at == start || n == 0)
    fail("'*' at character " + std::to_string(offset + start) +
         " wants a count of at least 1 after it, as in t*3 or (tt|)*30");
  if (at < text.size() && text[at] == '*')
    fail("a repeat of a repeat at character " + std::to_string(offset + at + 1) +
         "; multiply the counts, or write the group in parentheses");
  return n;
}

//! `text` with every repeat unrolled: marks and `|`, checked character by character. `text` starts at character
//! `offset` of the layout, which an error quotes as `quoted`.
inline std::string unroll_layout(std::string_view text, const std::string& field, std::string_view quoted,
                                 std::size_t offset) {
  const auto fail = [&](const std::string& why) { throw invalid_input(field, std::string(quoted) + ": " + why); };
  const auto is_mark = [](char ch) { return ch == 'E' || ch == 't' || ch == 'm' || ch == 'L' || ch == '|'; };
  const auto not_a_mark = [&](char ch, std::size_t at) {
    const std::string one = printable(std::string_view(&ch, 1));  // the byte itself, or its \xNN
    // In a key=value list the items after a layout's commas continue it; a key there without its '=' lands here.
    const bool had_commas = quoted.find(',') != std::string_view::npos;
    fail((one.size() == 1 ? "'" + one + "'" : "byte " + one) + " at character " + std::to_string(at + 1) +
         " is not a mark; use E (embedding), t (a layer), m (a prediction module), L (the loss), | between "
         "chunks, x*n and (..)*n to repeat" +
         (had_commas ? "; after a comma, an item with no '=' reads as more of the layout" : ""));
  };
  std::string out;
  const auto append = [&](std::string_view piece, std::size_t times) {
    if (piece.size() * times > pipeline_layout_marks_max - out.size())
      fail("unrolls to more than " + std::to_string(pipeline_layout_marks_max) + " marks; no model has that many");
    for (std::size_t k = 0; k < times; ++k) out += piece;
  };
  for (std::size_t at = 0; at < text.size();) {
    const char ch = text[at];
    if (ch == '(') {
      const std::size_t close = text.find(')', at + 1);
      if (close == std::string_view::npos)
        fail("the '(' at character " + std::to_string(offset + at + 1) + " is never closed");
      const std::string_view group = text.substr(at + 1, close - at - 1);
      if (group.empty()) fail("an empty group () at character " + std::to_string(offset + at + 1));
      if (group.find('(') != std::string_view::npos)
        fail("a group inside a group at character " + std::to_string(offset + at + 1) +
             "; Megatron-Core does not nest them: unroll the inner one");
      const std::string inner = unroll_layout(group, field, quoted, offset + at + 1);
      at = close + 1;
      if (at >= text.size() || text[at] != '*')
        fail("the group closed at character " + std::to_string(offset + close + 1) + " wants a count, as in (tt|)*30");
      ++at;
      append(inner, layout_repeat(text, at, field, quoted, offset));
      continue;
    }
    if (!is_mark(ch)) not_a_mark(ch, offset + at);
    ++at;
    std::size_t times = 1;
    if (at < text.size() && text[at] == '*') times = layout_repeat(text, ++at, field, quoted, offset);
    append(std::string_view(&ch, 1), times);
  }
  return out;
}
}  // namespace detail

//! The chunks of a layout string, in Megatron-Core's order, with the rules that do not depend on the model
//! checked (E first and L last, each once; no layer after a prediction module; every m in the last chunk).
//! Throws invalid_input naming `field`.
inline std::vector<pipeline_chunk> parse_pipeline_layout(std::string_view text,
                                                         const std::string& field = "pipeline_layout") {
  if (text.empty()) throw invalid_input(field, "empty; give the chunks, e.g. Et|(tt|)*30mL");
  std::string read(text);
  std::erase(read, ',');  // cosmetic: Megatron-Core's parse_str_to_list drops them before it reads the rest
  // An error quotes the layout as written, and as read when that differs: its characters count in the second.
  const std::string quoted = read.size() == text.size() ? detail::printable(text)
                                                        : detail::printable(text) + " (read without its commas as " +
                                                              detail::printable(read) + ")";
  const std::string marks = detail::unroll_layout(read, field, quoted, 0);
  const auto fail = [&](const std::string& why) { throw invalid_input(field, quoted + ": " + why); };
  if (marks.find_first_not_of('|') == std::string::npos) fail("has no marks; it needs at least E, a layer and L");
  if (marks.front() != 'E') fail("the first mark must be E, the embedding (Megatron-Core requires it)");
  if (marks.back() != 'L') fail("the last mark must be L, the loss (Megatron-Core requires it)");
  if (std::count(marks.begin(), marks.end(), 'E') != 1) fail("E, the embedding, appears more than once");
  if (std::count(marks.begin(), marks.end(), 'L') != 1)
    fail("L, the loss, appears more than once; a loss split over stages is not priced: give one L, last");
  const auto first_m = marks.find('m');
  if (first_m != std::string::npos && marks.find('t', first_m) != std::string::npos)
    fail("a layer after a prediction module; the layers come first (Megatron-Core requires it)");
  if (first_m != std::string::npos && marks.find('|', first_m) != std::string::npos)
    fail(
        "a prediction module before the last chunk; trinity prices them on the last stage beside the logits, "
        "so put every m in the last chunk (..|mL)");
  std::vector<pipeline_chunk> chunks(1);
  for (const char ch : marks) {
    auto& c = chunks.back();
    if (ch == '|')
      chunks.emplace_back();
    else if (ch == 't')
      ++c.layers;
    else if (ch == 'm')
      ++c.predictions;
    else
      (ch == 'E' ? c.embedding : c.loss) = true;
  }
  return chunks;
}

//! The transformer layers each of the pp ranks holds: the sum over its chunks (rank r holds r, r + pp, ...).
//! The chunks split evenly over the ranks (check_pipeline_layout checks it).
inline std::vector<std::size_t> layers_per_rank(const std::vector<pipeline_chunk>& chunks, std::size_t pp) {
  std::vector<std::size_t> out(pp, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) out[c % pp] += chunks[c].layers;
  return out;
}

//! The first rule a parsed layout breaks for a pipeline of pp stages of vpp chunks and a model of `layers`
//! layers and `predictions` prediction modules, on the field pipeline_layout (its value left to the caller, which
//! holds the text), or none.
inline layout_verdict check_pipeline_layout(const std::vector<pipeline_chunk>& chunks, std::size_t pp, std::size_t vpp,
                                            std::size_t layers, std::size_t predictions) {
  const auto broken = [](std::string what, std::string fix = {}) {
    return layout_violation{"pipeline_layout", {}, std::move(what), std::move(fix)};
  };
  const std::string n = std::to_string(chunks.size());
  if (pp <= 1) return broken("a layout without pipeline stages (pp=1) has nothing to place", "drop it, or give pp > 1");
  if (chunks.size() % pp != 0)
    return broken("its " + n + " chunks do not split over pp=" + std::to_string(pp) + " stages",
                  "give a multiple of " + std::to_string(pp) + " chunks, separated by |");
  if (chunks.size() != pp * vpp)
    return broken("its " + n + " chunks make vpp=" + std::to_string(chunks.size() / pp) +
                      " on pp=" + std::to_string(pp) + " stages, and the layout gives vpp=" + std::to_string(vpp),
                  "drop vpp (the layout fixes it), or give as many chunks as pp·vpp");
  std::size_t t = 0, m = 0;
  for (const auto& c : chunks) t += c.layers, m += c.predictions;
  if (t != layers)
    return broken("places " + std::to_string(t) + " layers (t), and the model has " + std::to_string(layers));
  if (m != predictions)
    return broken("places " + std::to_string(m) + " prediction modules (m), and the model has " +
                  std::to_string(predictions) + " (mtp_layers)");
  return std::nullopt;
}

//! check_pipeline_layout's verdict as 0.1 gave it, "pipeline_layout: why" or empty.
[[deprecated(
    "use check_pipeline_layout, which returns the field, what is wrong and the fix apart (CHANGELOG.md, "
    "0.2.0)")]] inline std::string
pipeline_layout_problem(const std::vector<pipeline_chunk>& chunks, std::size_t pp, std::size_t vpp, std::size_t layers,
                        std::size_t predictions) {
  return message_of(check_pipeline_layout(chunks, pp, vpp, layers, predictions));
}

}  // namespace trinity::model
