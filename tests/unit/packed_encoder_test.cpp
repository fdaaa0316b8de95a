// packed_encoder_test.cpp: the encoder's opt-in packed inference (predict.packed_inference;
// sdk/src/nn/packed_encoder.cpp) — for a marked encoder under no_grad with padded rows it computes the real
// positions as the padded forward does (to float rounding) and leaves padded positions at zero; unmarked,
// with autograd on, in training, with little padding or one row it is not used.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/nn/attention.h"
#include "ethost/nn/encoder.h"
#include "ethost/nn/model_types.h"
#include "nn/packed_encoder.h"

namespace packed_encoder_test {

et::nn::TransformerConfig config(bool fused) {
  et::nn::TransformerConfig c = et::nn::parse_hf_config(
      "{\"model_type\": \"bert\", \"vocab_size\": 50, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
      "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"max_position_embeddings\": 20}",
      "test");
  c.fused_kernels = fused;
  return c;
}

// An encoder inside a model, marked for packed inference as prepare_predict marks it.
struct Marked {
  torch::nn::Module model;
  et::nn::Encoder enc{nullptr};
  explicit Marked(const et::nn::TransformerConfig& c) : enc(c) {
    model.register_module("encoder", enc);
    REQUIRE(et::nn::detail::enable_packed_inference(model) == 1);
  }
};

// Rows of 9 positions: full, right-padded to 5, right-padded to 2, left-padded to 6 (the mask decides, not
// the side).
at::Tensor key_mask(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat, torch::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

}  // namespace packed_encoder_test

TEST_SUITE("unit.packed_encoder") {
  using namespace packed_encoder_test;

  TEST_CASE("no_grad over padded rows: real positions as the padded forward, padded positions zero") {
    for (bool fused : {false, true}) {
      CAPTURE(fused);
      torch::manual_seed(3);
      Marked m(config(fused));
      auto& enc = m.enc;
      enc->eval();
      at::Tensor mask = key_mask({{1, 1, 1, 1, 1, 1, 1, 1, 1},
                                  {1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  {1, 1, 0, 0, 0, 0, 0, 0, 0},
                                  {0, 0, 0, 1, 1, 1, 1, 1, 1}});
      at::Tensor ext = et::nn::extended_attention_mask(mask, torch::kFloat);
      at::Tensor hidden = torch::randn({4, 9, 32});
      at::Tensor padded = enc->forward(hidden, ext).last_hidden_state;  // autograd on: the padded forward
      at::Tensor packed;
      {
        torch::NoGradGuard no_grad;
        packed = enc->forward(hidden, ext).last_hidden_state;
      }
      REQUIRE(packed.sizes() == padded.sizes());
      at::Tensor real = mask.to(torch::kBool);
      double diff = (packed - padded).abs().masked_select(real.unsqueeze(-1)).max().item<double>();
      CHECK(diff < 1e-5);
      CHECK(packed.masked_select(real.logical_not().unsqueeze(-1)).abs().max().item<double>() == 0.0);
      CHECK(padded.masked_select(real.logical_not().unsqueeze(-1)).abs().max().item<double>() > 0.0);
      // The hidden states or attentions asked for: the padded forward, whatever the grad mode.
      torch::NoGradGuard no_grad;
      auto full = enc->forward(hidden, ext, /*want_hidden_states=*/true);
      CHECK(torch::equal(full.last_hidden_state, padded));
    }
  }

  TEST_CASE("not used where it does not apply: unmarked, training, little padding, one row") {
    torch::manual_seed(4);
    et::nn::TransformerConfig c = config(true);
    c.hidden_dropout_prob = 0;
    c.attention_probs_dropout_prob = 0;
    et::nn::Encoder plain(c);
    plain->eval();
    Marked m(c);
    auto& enc = m.enc;
    torch::NoGradGuard no_grad;
    auto pad_positions_zero = [&](const at::Tensor& mask) {
      at::Tensor out = enc->forward(torch::randn({mask.size(0), mask.size(1), 32}),
                                    et::nn::extended_attention_mask(mask, torch::kFloat))
                           .last_hidden_state;
      return out.masked_select(mask.to(torch::kBool).logical_not().unsqueeze(-1))
                 .abs()
                 .max()
                 .item<double>() == 0.0;
    };
    at::Tensor half = key_mask({{1, 1, 1, 1}, {1, 1, 0, 0}});
    {
      at::Tensor out =
          plain->forward(torch::randn({2, 4, 32}), et::nn::extended_attention_mask(half, torch::kFloat))
              .last_hidden_state;
      CHECK(out[1][3].abs().max().item<double>() > 0.0);  // not marked: padded
    }
    enc->eval();
    CHECK(pad_positions_zero(half));  // packed
    enc->train();
    CHECK_FALSE(pad_positions_zero(half));  // training: padded
    enc->eval();
    CHECK_FALSE(
        pad_positions_zero(key_mask({{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 0}})));
    CHECK_FALSE(pad_positions_zero(key_mask({{1, 1, 1, 0}})));
  }
}
