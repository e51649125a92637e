#pragma once
//! \file
//! A `key=value,key=value` list as the command line takes a layout or a serving configuration: split, each key
//! checked against the known ones. An empty item, an item with no '=', an unknown key (with the nearest known one)
//! or a key given twice is refused under `field`, with an example of the form. One key of a list may take commas
//! in its value (`key_value_form::comma_key`): the items after it that hold no '=' continue its value, so that a
//! Megatron pipeline layout (`Et*2|(t*2|)*34,t*3|(t*2|)*3,tL`, its commas cosmetic) reads as written.

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>

namespace trinity::detail {

struct key_value_form {
  std::string_view list_example;  //!< e.g. "tp=8,pp=4,dp=2"
  std::string_view pair_example;  //!< e.g. "tp=8"
  std::string_view of;            //!< what the keys are keys of, e.g. " of an llm-serve configuration" (or empty)
  std::string_view comma_key{};   //!< the key whose value runs on over the items with no '=' after it (or none)
};

//! Calls f(key, value) for each pair of `text`, in order, after checking the key.
template <class F>
void for_each_key_value(std::string_view text, const std::string& field, std::span<const std::string_view> keys,
                        const key_value_form& form, F&& f) {
  std::vector<bool> seen(keys.size(), false);
  const auto fail = [&](const std::string& why) { throw invalid_input(field, why); };
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = std::min(text.find(',', at), text.size());
    if (!form.comma_key.empty() && text.substr(at, end - at).starts_with(std::string(form.comma_key) + "="))
      while (end < text.size()) {  // the next item continues the value unless it is empty or a key=value
        const std::size_t next = std::min(text.find(',', end + 1), text.size());
        const std::string_view piece = text.substr(end + 1, next - end - 1);
        if (piece.empty() || piece.find('=') != std::string_view::npos) break;
        end = next;
      }
    const std::string_view item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty())
      fail("an empty item; write key=value pairs separated by commas, e.g. " + std::string(form.list_example));
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      fail("\"" + std::string(item) + "\" has no '='; write key=value, e.g. " + std::string(form.pair_example));
    const std::string key(item.substr(0, eq)), value(item.substr(eq + 1));
    const auto k = static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
    if (k == keys.size()) fail("\"" + key + "\" is not a key" + std::string(form.of) + suggestion(key, keys));
    if (seen[k]) fail("\"" + key + "\" is given twice");
    seen[k] = true;
    f(key, value);
  }
}

}  // namespace trinity::detail
