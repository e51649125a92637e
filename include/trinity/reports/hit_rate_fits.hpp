#pragma once
//! \file
//! Both hit-rate families of a measured curve (model/fit.hpp), fitted where the points allow, with the JSON, the
//! table row and the gnuplot expression every replay report writes them as.

#include <nlohmann/json.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <trinity/model/fit.hpp>
#include <trinity/reports/gnuplot.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::reports {

struct hit_rate_fits {
  std::optional<model::fit_result<model::exponential_saturation>> exponential;
  std::optional<model::fit_result<model::power_law>> power;

  //! The exponential family from one point below a hit rate of 1, the power law from two.
  static hit_rate_fits of(const std::vector<model::capacity_point>& points, bytes entry) {
    hit_rate_fits f;
    if (!points.empty()) f.exponential = model::fit_exponential_saturation(points, entry);
    if (points.size() >= 2) f.power = model::fit_power_law(points);
    return f;
  }

  //! Adds "exponential_saturation" and "power_law" to `out`, each where fitted.
  void add_to(nlohmann::json& out) const {
    if (exponential)
      out["exponential_saturation"] = {{"beta", exponential->model.beta},
                                       {"rmse", exponential->rmse},
                                       {"max_abs_error", exponential->max_abs_error}};
    if (power)
      out["power_law"] = {{"kappa_per_gb", power->model.kappa.value() * 1e9},
                          {"gamma", power->model.gamma},
                          {"rmse", power->rmse},
                          {"max_abs_error", power->max_abs_error}};
  }

  //! The power law as a gnuplot function of x in GB: ", <expression> with lines ..." or nothing.
  [[nodiscard]] std::string power_law_plot(std::size_t colour, const std::string& title) const {
    if (!power) return {};
    std::ostringstream gp;
    gp << ", (x > 0 ? 1 - (1 + " << power->model.kappa.value() * 1e9 << " * x) ** (-" << power->model.gamma
       << ") : 0) with lines dt 2 lc " << colour << " title " << quoted(title);
    return gp.str();
  }

  //! The power law's parameters as the tables print them.
  [[nodiscard]] std::string power_law_parameters() const {
    return "kappa = " + fixed(power->model.kappa.value() * 1e9, 4) + "/GB, gamma = " + fixed(power->model.gamma, 4);
  }
};

}  // namespace trinity::reports
