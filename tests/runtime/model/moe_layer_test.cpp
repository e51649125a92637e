#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/parallel/expert_parallel.hpp>

#include "test_cluster.hpp"

namespace model_moe_layer_test {

using namespace trinity;
using trinity::test::h100_like;
using namespace trinity::model;

namespace {
// The verdict as the text a user reads ("field: what; fix"), empty where the layout breaks no rule.
std::string layout_text(const training_job& j, const parallel_layout& l) { return message_of(check_layout(j, l)); }
// Mixtral-8x7B's shape with 4 layers: what a layer costs does not depend on how many there are.
training_job mixtral(std::size_t layers = 4) {
  training_job j;
  j.shape = shapes::mixtral_8x7b;
  j.shape.layers = layers;
  j.sequence = 4096;
  j.global_batch = 32;
  j.flash_attention = true;
  j.dropout = false;
  return j;
}

}  // namespace

TEST_CASE("a mixture's weights: every expert held, top_k of them run", "[model][moe]") {
  const auto& m = shapes::mixtral_8x7b;
  const double h = 4096, f = 14336, kv = 8 * 128, V = 32000, L = 32;
  const double attention = h * (h + 2 * kv) + h * h, expert = 3 * h * f, router = h * 8;
  CHECK(moe_layer_count(m) == 32);
  CHECK(parameters(m) == L * (attention + router + 8 * expert + 2 * h) + 2 * V * h + h);
  CHECK(active_parameters(m) == L * (attention + router + 2 * expert + 2 * h) + 2 * V * h + h);
  // Every other layer a mixture (moe_layer_frequency 2): 16 of each kind.
  auto half = m;
  half.moe_layer_frequency = 2;
  CHECK(moe_layer_count(half) == 16);
  CHECK(parameters(half) == 16 * layer_parameters(m) + 16 * moe_layer_parameters(m) + 2 * V * h + h);
  // The first three layers dense (DeepSeek-V3's first_k_dense_replace), then a mixture in every layer: 29; with
  // every other layer of the rest, 15 (layers 3, 5, ... 31).
  auto first = m;
  first.first_dense_layers = 3;
  CHECK(moe_layer_count(first) == 29);
  CHECK(parameters(first) == 3 * layer_parameters(m) + 29 * moe_layer_parameters(m) + 2 * V * h + h);
  first.moe_layer_frequency = 2;
  CHECK(moe_layer_count(first) == 15);
  // Shared experts run on every token and count in both.
  auto shared = m;
  shared.shared_experts = 1;
  CHECK(active_parameters(shared) - active_parameters(m) == Approx(L * expert).epsilon(1e-12));
  // A step's FLOPs follow the active weights: 3 passes of 2 FLOPs per active matmul weight per token, the
  // attention core and the logits.
  const double B = 8, s = 4096, tokens = B * s;
  const double matmul = 2 * L * (attention + router + 2 * expert) * tokens, attn = 4 * h * L * s * tokens;
  CHECK(training_flops(m, B, s, recomputation::none).value() ==
        Approx(3 * (matmul + attn) + 3 * 2 * V * h * tokens).epsilon(1e-12));
}

TEST_CASE("a mixture's shape is refused by field where it cannot be", "[model][moe]") {
  auto m = shapes::mixtral_8x7b;
  m.top_k = 9;
  CHECK_THROWS_WITH(validate(m), Catch::Contains("top_k"));
  m = shapes::llama3_8b;
  m.top_k = 2;
  CHECK_THROWS_WITH(validate(m), Catch::Contains("top_k") && Catch::Contains("give experts"));
  m = shapes::mixtral_8x7b;
  m.experts = 1;
  CHECK_THROWS_WITH(validate(m), Catch::Contains("experts"));
  m = shapes::mixtral_8x7b;
  m.first_dense_layers = 32;
  CHECK_THROWS_WITH(validate(m),
                    "first_dense_layers: must leave a mixture layer: fewer than the 32 layers (0: the "
                    "first layer is a mixture)");
  m = shapes::llama3_8b;
  m.first_dense_layers = 1;
  CHECK_THROWS_WITH(validate(m), Catch::Contains("first_dense_layers") && Catch::Contains("give experts"));
}

TEST_CASE("the MoE block: router, the local experts' GEMMs at their own shape, all-to-alls at the busiest load",
          "[model][moe]") {
  const auto c = h100_like();
  auto j = mixtral();
  const auto l = io::parse_parallel_layout("tp=2,dp=8,sp=on,ep=4");
  const double T = 4096, t = 2, h = 4096, f = 14336, k = 2, E = 8, ep = 4;
  for (const double load : {1.0, 1.5}) {
    j.expert_imbalance = load;
    const auto x = moe_block(j, c, l, T);
    const double tokens = T / t, rows = tokens * k, per_expert = load * rows / (E / ep);
    CHECK(x.tokens == tokens);
    CHECK(x.rows == rows);
    const double router = model::detail::gemm_time(c, tokens, E, h).value();
    const double experts =
        (E / ep) *
        (model::detail::gemm_time(c, per_expert, 2 * f, h) + model::detail::gemm_time(c, per_expert, h, f)).value();
    CHECK(x.gemm_f.value() == Approx(router + experts).epsilon(1e-12));
    // One all-to-all: the busiest rank's rows over 4 ranks inside the domain; balanced bytes leave each GPU.
    CHECK(x.all_to_all == pairwise_all_to_all_time(4, bytes{load * rows * h * 2},
                                                   model::detail::as_collective(model::detail::level(c, 4))));
    CHECK(x.all_to_all_bytes.value() == rows * (ep - 1) / ep * h * 2);
    CHECK(x.etp_collective == seconds{});
    // Kept: router input and fp32 probabilities per token; per row the expert's input, SwiGLU's two inputs and
    // fc2's input.
    CHECK(x.kept == Approx(tokens * (2 * h + 4 * E) + load * rows * (2 * h + 2 * 2 * f + 2 * f)).epsilon(1e-12));
    // The rows' copies a pass, 2 bytes a value: permute reads and writes the k rows of every token, unpermute
    // reads them and writes the tokens, and a rank of 2 experts regroups the rows it runs by expert and back.
    CHECK(x.copied.value() == Approx(2 * h * (2 * rows + rows + tokens + 4 * load * rows)).epsilon(1e-12));
  }
  // One expert a rank: nothing to regroup.
  const auto whole = io::parse_parallel_layout("tp=2,dp=8,sp=on,ep=8");
  j.expert_imbalance = 1;
  CHECK(moe_block(j, c, whole, T).copied.value() == Approx(2 * h * (3 * T / t * k + T / t)).epsilon(1e-12));

  // Capacity caps the busiest rank's load at its factor.
  j.expert_imbalance = 1.5;
  j.capacity_factor = 1.25;
  CHECK(j.expert_load() == 1.25);
  j.capacity_factor = 2;
  CHECK(j.expert_load() == 1.5);
}

TEST_CASE("an all-to-all past the scale-up domain: domain-mates over the fast link, the rest over the slow",
          "[model][moe]") {
  const auto c = h100_like();  // domain 8: 300 GB/s and 1 us inside, 25 GB/s and 5 us across
  const bytes S{64e6};
  // 32 ranks, experts whole: 7 domain-mates take 7/32 of the buffer, 24 others 24/32, at once.
  const auto l = io::parse_parallel_layout("tp=2,dp=16,sp=on,ep=32");
  const double near = 7 * 1e-6 + 7.0 / 32 * 64e6 / 300e9, far = 24 * 5e-6 + 24.0 / 32 * 64e6 / 25e9;
  CHECK(expert_all_to_all_time(c, l, S).value() == Approx(std::max(near, far)).epsilon(1e-12));
  // Split two ways, each rank's group has 8/2 - 1 = 3 domain-mates.
  const auto split = io::parse_parallel_layout("tp=2,dp=16,sp=on,ep=16,etp=2");
  CHECK(expert_all_to_all_time(c, split, S).value() ==
        Approx(std::max(3 * 1e-6 + 3.0 / 16 * 64e6 / 300e9, 12 * 5e-6 + 12.0 / 16 * 64e6 / 25e9)).epsilon(1e-12));
  // Inside the domain: the pairwise exchange on its link.
  const auto inside = io::parse_parallel_layout("dp=8,ep=8");
  CHECK(expert_all_to_all_time(c, inside, S) == pairwise_all_to_all_time(8, S, model::detail::as_collective(c.fast)));
  CHECK(expert_all_to_all_time(c, io::parse_parallel_layout("dp=8"), S) == seconds{});
}

TEST_CASE("expert tensor parallelism gathers the rows over etp ranks and splits each expert's width", "[model][moe]") {
  const auto c = h100_like();
  const auto j = mixtral();
  const auto l = io::parse_parallel_layout("tp=2,dp=8,sp=on,ep=4,etp=2");
  const double T = 4096, h = 4096, f = 14336, k = 2, etp = 2;
  const auto x = moe_block(j, c, l, T);
  const double tokens = T / 2, rows = etp * tokens * k, per_expert = rows / 2;
  CHECK(x.rows == rows);
  const double experts = 2 * (model::detail::gemm_time(c, per_expert, 2 * f / etp, h) +
                              model::detail::gemm_time(c, per_expert, h, f / etp))
                                 .value();
  CHECK(x.gemm_f.value() == Approx(model::detail::gemm_time(c, tokens, 8, h).value() + experts).epsilon(1e-12));
  const bytes gathered{etp * tokens * k * h * 2};
  CHECK(x.etp_collective == ring_all_gather_time(2, gathered, model::detail::as_collective(c.fast)));
  CHECK(x.etp_bytes == gathered / 2.0);
  // The mechanism's count (parallel/expert_parallel.hpp) with balanced routing: each member's tokens·k rows
  // gathered to the other, and the other's back, at 4-byte values where the model's are 2-byte: a pass's
  // all-gather and reduce-scatter, less the row counts that go ahead of them.
  const auto mine = static_cast<std::size_t>(tokens * k), groups = std::size_t{4 * 2};
  const auto counted =
      parallel::expert_tensor_bytes(mine, mine, static_cast<std::size_t>(h), groups, 2) - groups * sizeof(std::size_t);
  CHECK(static_cast<double>(counted) == 2.0 * x.etp_bytes.value() * (4.0 / 2.0));
  // One pass of the layer: dispatch and combine, each an all-to-all over the 4 ep ranks and a gather over the 2
  // etp ranks; the step prices it in each pass that runs the layer.
  const double pass = 2 * (tokens * k * (4 - 1) / 4.0 * h * 2 + (etp - 1) * tokens * k * h * 2);
  CHECK(expert_exchange_bytes(j.shape, tokens, 4, 2).value() == Approx(pass).epsilon(1e-12));
  CHECK(expert_exchange_bytes(j.shape, tokens, 4, 2) == 2.0 * (x.all_to_all_bytes + x.etp_bytes));
  const double mb = 32.0 / 8, layers = 4, passes = 2;
  CHECK(price(j, c, l).ep_bytes.value() == Approx(mb * layers * passes * pass).epsilon(1e-12));
}

TEST_CASE("a step of a mixture: four all-to-alls a layer, bytes counted exactly", "[model][moe]") {
  const auto c = h100_like();
  const auto j = mixtral();
  const double T = 4096, h = 4096, k = 2;
  for (const auto* text : {"dp=8,ep=8", "dp=8,ep=2", "tp=2,dp=4,sp=on,ep=4", "dp=8,ep=8,recompute=full"}) {
    CAPTURE(text);
    const auto l = io::parse_parallel_layout(text);
    const auto r = price(j, c, l);
    const double tokens = T / static_cast<double>(l.tp), ep = static_cast<double>(l.ep);
    const double mb = 32.0 / static_cast<double>(l.dp);
    const double passes = l.recompute == recomputation::full ? 3 : 2;
    // Per micro-batch and layer: dispatch and combine in each pass that runs the forward or backward.
    CHECK(r.ep_bytes.value() == Approx(mb * 4 * passes * 2 * tokens * k * (ep - 1) / ep * h * 2).epsilon(1e-12));
    CHECK(r.ep_comm > seconds{});
  }
  // A block of the first n of the chunk's 4 layers recomputed: those n exchange a third time, the others twice (what
  // trinity-train's recomputed experts send, and verify holds).
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(n);
    const auto r =
        price(j, c, io::parse_parallel_layout("dp=8,ep=8,recompute=full,recompute_layers=" + std::to_string(n)));
    const double per = 2 * T * k * (8 - 1) / 8.0 * h * 2, layers = static_cast<double>(n);
    CHECK(r.ep_bytes.value() == Approx(4 * (3 * layers + 2 * (4 - layers)) * per).epsilon(1e-12));
  }
  // Without expert parallelism the tokens stay home.
  CHECK(price(j, c, io::parse_parallel_layout("dp=8")).ep_bytes == bytes{});
  // Every other layer a mixture: half the exchange.
  auto half = j;
  half.shape.moe_layer_frequency = 2;
  const auto l = io::parse_parallel_layout("dp=8,ep=8");
  CHECK(price(half, c, l).ep_bytes.value() == Approx(price(j, c, l).ep_bytes.value() / 2).epsilon(1e-12));
}

TEST_CASE("a mixture's experts shard over ep and reduce over the expert-data-parallel ranks", "[model][moe]") {
  const auto c = h100_like();
  const auto j = mixtral();
  const auto& m = j.shape;
  const auto l = io::parse_parallel_layout("dp=8,ep=4,zero=1");
  const auto r = price(j, c, l);
  const double expert = expert_parameters(m), L = 4;
  CHECK(expert_data_parallel(l) == 2);
  CHECK(r.expert_parameters == L * 2 * expert);  // 8/4 experts a GPU, each whole
  const double dense = L * moe_layer_parameters(m, 0) + 2.0 * 32000 * 4096 + 4096;
  CHECK(r.stage_parameters == Approx(dense + L * 2 * expert).epsilon(1e-12));
  // The reduction: the dense weights over 8 ranks, the experts over 2, each a reduce-scatter under ZeRO 1 and
  // one all-gather of the parameters.
  const auto link = model::detail::as_collective(model::detail::level(c, 8));
  const auto gd = gradient_reduction(8, r.stage_parameters - r.expert_parameters, 2, 1, uncoded_gradient(), link);
  const auto ge = gradient_reduction(2, r.expert_parameters, 2, 1, uncoded_gradient(), link);
  const double gathered = 7.0 / 8 * (r.stage_parameters - r.expert_parameters) * 2 + 1.0 / 2 * r.expert_parameters * 2;
  CHECK(r.dp_bytes.value() == Approx((gd.sent + ge.sent).value() + gathered).epsilon(1e-12));
  // Optimizer states: each group sharded over its own ranks.
  CHECK(r.optimizer_states.value() ==
        Approx((r.stage_parameters - r.expert_parameters) * 12 / 8 + r.expert_parameters * 12 / 2).epsilon(1e-12));
}

TEST_CASE("a mixture's layouts are refused by the rule they break", "[model][moe]") {
  const auto j = mixtral();
  const auto problem = [&](const char* text) { return layout_text(j, io::parse_parallel_layout(text)); };
  CHECK(problem("dp=8,ep=3").find("ep: 3 does not divide the 8 experts") == 0);
  CHECK(problem("dp=4,ep=8").find("ep: ep·etp = 8 must divide") == 0);
  CHECK(problem("tp=2,dp=4,ep=4").find("sp: a mixture of experts with tp > 1") == 0);
  CHECK(problem("dp=8,ep=2,etp=5").find("etp: 5 does not divide") == 0);
  CHECK(problem("tp=2,dp=4,sp=on,ep=4,etp=2").empty());
  training_job dense = j;
  dense.shape = shapes::llama3_8b;
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,ep=2")).find("ep: the model has no experts") == 0);
}

TEST_CASE("fp8 runs the experts' GEMMs at the fp8 rate, the router in 16 bits", "[model][moe]") {
  const auto c = h100_like();
  auto j16 = mixtral(), j8 = mixtral();
  j8.fp8 = true;
  const auto l = io::parse_parallel_layout("dp=8,ep=8");
  const double T = 4096, h = 4096, E = 8;
  const auto x16 = moe_block(j16, c, l, T), x8 = moe_block(j8, c, l, T);
  const double router = model::detail::gemm_time(c, T, E, h).value();
  CHECK((x8.gemm_f.value() - router) == Approx((x16.gemm_f.value() - router) / 1.4).epsilon(1e-12));
}

TEST_CASE("the node-deduplicated dispatcher's rows: closed forms, and the protocol simulated on random routing",
          "[model][moe]") {
  // k = 1: a token crosses to another node exactly when the all-to-all's row would, (ep - g)/ep.
  const auto one = deduplicated_dispatch_rows(64, 1, 16, 8);
  CHECK(one.across == Approx(8.0 / 16).epsilon(1e-12));
  // One node: nothing crosses; a rank reaches another once, however many of its experts it picked there.
  const auto inside = deduplicated_dispatch_rows(64, 4, 8, 8);
  CHECK(inside.across == 0);
  const double miss = (56.0 * 55 * 54 * 53) / (64.0 * 63 * 62 * 61);  // C(56, 4)/C(64, 4): a rank's 8 all missed
  CHECK(inside.within == Approx(7 * (1 - miss)).epsilon(1e-12));
  // One expert a rank on one node: a rank a choice, as the all-to-all sends (Mixtral's 8 over 8).
  CHECK(deduplicated_dispatch_rows(8, 2, 8, 8).within == Approx(2.0 * 7 / 8).epsilon(1e-12));

  // The protocol on uniformly random top-4 of 64 over 16 ranks in two nodes of 8: every rank's tokens cross once
  // to each other node they reach (to the rank with the sender's place there), which forwards each once to each
  // other rank of its node they reach. The records a rank sends, a token, against the formula.
  const std::size_t E = 64, k = 4, n = 16, g = 8, tokens = 4000, per = E / n;
  std::mt19937_64 rng(7);
  double across = 0, within = 0;
  std::vector<std::size_t> order(E);
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t t = 0; t < tokens; ++t) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::vector<bool> hit(n, false);
      for (std::size_t j = 0; j < k; ++j) {
        std::uniform_int_distribution<std::size_t> pick(j, E - 1);
        std::swap(order[j], order[pick(rng)]);
        hit[order[j] / per] = true;
      }
      for (std::size_t m = 0; m < n / g; ++m) {
        const std::size_t stage = m * g + q % g;
        bool reached = false;
        for (std::size_t d = m * g; d < (m + 1) * g; ++d) {
          reached = reached || hit[d];
          within += hit[d] && d != stage ? 1.0 : 0.0;
        }
        across += reached && stage != q ? 1.0 : 0.0;
      }
    }
  const double all = static_cast<double>(n * tokens);
  const auto rows = deduplicated_dispatch_rows(E, k, n, g);
  CHECK(across / all == Approx(rows.across).epsilon(0.02));
  CHECK(within / all == Approx(rows.within).epsilon(0.02));
  // Fewer rows cross than the all-to-all's k·(ep - g)/ep, which sends a token to a node once a choice there.
  CHECK(rows.across < 4.0 * 8 / 16);
}

TEST_CASE("dispatcher=deepep prices the deduplicated rows, across nodes and within one at once", "[model][moe]") {
  const auto c = h100_like();  // domain 8: 300 GB/s and 1 us inside, 25 GB/s and 5 us across
  auto j = mixtral();
  j.shape.experts = 64, j.shape.top_k = 4;
  const auto l = io::parse_parallel_layout("dp=16,ep=16,dispatcher=deepep");
  CHECK(l.dispatcher == token_dispatcher::by_node);
  CHECK(to_string(l).find(",dispatcher=deepep") != std::string::npos);
  const double T = 4096, h = 4096;
  const auto d = deduplicated_dispatch_rows(64, 4, 16, 8);
  const auto x = moe_block(j, c, l, T);
  CHECK(x.all_to_all_bytes.value() == Approx(T * (d.across + d.within) * h * 2).epsilon(1e-12));
  CHECK(x.across_buffer.value() == Approx(T * d.across * h * 2).epsilon(1e-12));
  const double far = 1 * 5e-6 + T * d.across * h * 2 / 25e9, near = 7 * 1e-6 + T * d.within * h * 2 / 300e9;
  CHECK(x.all_to_all.value() == Approx(std::max(far, near)).epsilon(1e-12));
  // Against the all-to-all on the same layout: fewer bytes cross, so the cross-node time falls.
  const auto flat = moe_block(j, c, io::parse_parallel_layout("dp=16,ep=16"), T);
  CHECK(x.all_to_all < flat.all_to_all);
  // A step's expert bytes: dispatch and combine, forward and backward, of every layer and micro-batch.
  const double mb = 32.0 / 16, layers = 4;
  CHECK(price(j, c, l).ep_bytes.value() == Approx(mb * layers * 2 * 2 * x.all_to_all_bytes.value()).epsilon(1e-12));
  // One expert a rank inside one node: the same bytes as the all-to-all.
  const auto mixtral8 = mixtral();
  CHECK(price(mixtral8, c, io::parse_parallel_layout("dp=8,ep=8,dispatcher=deepep")).ep_bytes.value() ==
        Approx(price(mixtral8, c, io::parse_parallel_layout("dp=8,ep=8")).ep_bytes.value()).epsilon(1e-12));
}

TEST_CASE("dispatcher is refused where it cannot run, by field", "[model][moe]") {
  const auto c = h100_like();
  auto j = mixtral();
  j.shape.experts = 96, j.shape.top_k = 4;
  j.global_batch = 48;
  CHECK(layout_text(j, io::parse_parallel_layout("dp=8,ep=4,etp=2,dispatcher=deepep")).find("dispatcher: deepep") == 0);
  training_job dense = j;
  dense.shape = shapes::llama3_8b;
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,dispatcher=deepep"))
            .find("dispatcher: the model has no experts") == 0);
  CHECK_THROWS_WITH(price(j, c, io::parse_parallel_layout("dp=12,ep=12,dispatcher=deepep")),
                    Catch::StartsWith("dispatcher: deepep sends a token once to each node") &&
                        Catch::Contains("give an ep that divides 8 or a multiple of it"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=8,ep=8,dispatcher=flex"),
                    Catch::StartsWith("parallelism: dispatcher=flex: use alltoall"));
}

}  // namespace model_moe_layer_test
