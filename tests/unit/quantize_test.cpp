// quantize_test.cpp: nn::quantize_encoder_int8 / int8_linear against torch.ao's dynamic int8 Linear on the
// onednn engine (tests/fixtures/int8/make_int8_golden.py), and an int8 encoder forward against its fp32 one.
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/nn/encoder.h"
#include "ethost/nn/quantize.h"
#include "test_paths.h"

using namespace et;

namespace {

nn::TransformerConfig small_config() {
  nn::TransformerConfig c;
  c.hidden_size = 24;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 40;
  c.hidden_dropout_prob = 0;
  c.attention_probs_dropout_prob = 0;
  return c;
}

}  // namespace

TEST_SUITE("unit.quantize") {
  TEST_CASE("int8_linear equals torch.ao's dynamic Linear (onednn) on the padded, range-snapped input") {
    auto g = test::read_json(ETHOST_FIXTURES_DIR "/int8/int8_linear_golden.json");
    torch::manual_seed(3);
    nn::Encoder enc(small_config());
    enc->eval();
    auto& dense = enc->layers[0]->intermediate->dense;
    {
      torch::NoGradGuard ng;
      dense->weight.copy_(test::tensor_from_json(g["w"], at::kFloat));
      dense->bias.copy_(test::tensor_from_json(g["b"], at::kFloat));
    }
    at::Tensor x = test::tensor_from_json(g["x"], at::kFloat);
    torch::nn::Linear stranger(24, 40);
    CHECK_FALSE(nn::int8_linear(*dense, x).defined());  // nothing quantized yet: callers run fp32

    const int64_t before = nn::int8_quantized_layers();
    CHECK(nn::quantize_encoder_int8(*enc) ==
          12);  // 2 layers x (q, k, v, attention output, intermediate, output)
    CHECK(nn::int8_quantized_layers() == before + 12);

    torch::NoGradGuard ng;
    at::Tensor y = nn::int8_linear(*dense, x);
    REQUIRE(y.defined());
    CHECK(y.size(0) == 3);
    CHECK(y.size(1) == 7);
    CHECK(y.size(2) == 40);
    at::Tensor y_padded = test::tensor_from_json(g["y_padded"], at::kFloat);
    at::Tensor y_plain = test::tensor_from_json(g["y_plain"], at::kFloat);
    at::Tensor y_fp32 = test::tensor_from_json(g["y_fp32"], at::kFloat);
    INFO("vs torch padded: ", test::max_abs_diff(y, y_padded), "  vs fp32: ", test::max_abs_diff(y, y_fp32));
    CHECK(test::max_abs_diff(y, y_padded) < 1e-5);
    // The snapping costs little against torch's own dynamic quantization: both stay within int8's error.
    CHECK(test::max_abs_diff(y, y_fp32) < 0.1);
    CHECK(test::max_abs_diff(y, y_fp32) > 1e-4);  // it really is int8
    CHECK(test::max_abs_diff(y_plain, y_fp32) < 0.1);
    // 2-D input, a single row, and the same call twice (oneDNN's cached primitive) give the same numbers.
    at::Tensor row = x[1][3].unsqueeze(0);
    at::Tensor y_row = nn::int8_linear(*dense, row);
    CHECK(y_row.sizes() == std::vector<int64_t>{1, 40});
    CHECK(test::max_abs_diff(y_row, nn::int8_linear(*dense, row)) == 0.0);
    CHECK(test::max_abs_diff(y_row, y_fp32[1][3].unsqueeze(0)) < 0.1);
    // A layer that was not quantized, or a non-float input, falls back (undefined result).
    CHECK_FALSE(nn::int8_linear(*stranger, x).defined());
    CHECK_FALSE(nn::int8_linear(*dense, x.to(at::kDouble)).defined());
  }

  TEST_CASE("an int8 encoder's forward stays close to its fp32 forward") {
    torch::manual_seed(5);
    nn::Encoder fp32(small_config()), q8(small_config());
    fp32->eval();
    q8->eval();
    {
      torch::NoGradGuard ng;
      auto src = fp32->named_parameters();
      for (auto& p : q8->named_parameters()) p.value().copy_(src[p.key()]);
    }
    CHECK(nn::quantize_encoder_int8(*q8) == 12);
    torch::NoGradGuard ng;
    at::Tensor h = torch::randn({2, 9, 24});
    at::Tensor mask = torch::zeros({2, 1, 1, 9});
    at::Tensor a = fp32->forward(h, mask).last_hidden_state;
    at::Tensor b = q8->forward(h, mask).last_hidden_state;
    INFO("max |int8 - fp32| = ", test::max_abs_diff(a, b));
    CHECK(test::max_abs_diff(a, b) > 1e-5);  // the int8 path ran
    CHECK(test::max_abs_diff(a, b) < 0.15);  // LayerNorm'd outputs (unit scale)
  }
}
