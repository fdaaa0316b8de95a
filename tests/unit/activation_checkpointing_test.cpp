// activation_checkpointing_test.cpp: recomputing encoder layers in backward gives the same gradients as keeping
// their activations (dropout on, same seed: the RNG state is replayed) and needs less peak memory (measured with
// the counting CPU allocator) for a 6-layer model.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <map>

#include "ethost/memory.h"
#include "ethost/nn/encoder.h"

namespace {

struct RunResult {
  std::map<std::string, at::Tensor> grads;
  at::Tensor input_grad;
  int64_t peak_activation_bytes = 0;
};

RunResult run(int64_t checkpoint_every) {
  et::nn::TransformerConfig c;
  c.hidden_size = 64;
  c.num_hidden_layers = 6;
  c.num_attention_heads = 4;
  c.intermediate_size = 256;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  c.activation_checkpointing = checkpoint_every;
  torch::manual_seed(7);
  et::nn::Encoder enc(c);
  enc->train();
  auto x = torch::randn({8, 96, 64}).requires_grad_(true);
  auto mask = torch::zeros({8, 1, 1, 96});
  torch::manual_seed(11);  // the dropout masks
  RunResult r;
  const int64_t before = et::memory::live_bytes();
  et::memory::reset_peak();
  auto out = enc->forward(x, mask).last_hidden_state;
  auto loss = (out * out).mean();
  loss.backward();
  r.peak_activation_bytes = et::memory::peak_bytes() - before;
  for (auto& p : enc->named_parameters()) r.grads[p.key()] = p.value().grad().clone();
  r.input_grad = x.grad().clone();
  return r;
}

}  // namespace

TEST_SUITE("unit.activation_checkpointing") {
  TEST_CASE("same gradients with dropout on, lower peak memory") {
    et::memory::track_cpu_allocations();
    REQUIRE(et::memory::tracking());
    at::set_num_threads(1);  // same reduction order in both runs
    auto plain = run(0);
    auto every = run(1);
    auto second = run(2);
    REQUIRE(plain.grads.size() == every.grads.size());
    for (auto& [k, g] : plain.grads) {
      CAPTURE(k);
      CHECK(torch::allclose(g, every.grads.at(k), 1e-6, 1e-7));
      CHECK(torch::allclose(g, second.grads.at(k), 1e-6, 1e-7));
    }
    CHECK(torch::allclose(plain.input_grad, every.input_grad, 1e-6, 1e-7));
    MESSAGE("peak activation bytes: plain " << plain.peak_activation_bytes << ", every layer "
                                            << every.peak_activation_bytes << ", every 2nd " << second.peak_activation_bytes);
    CHECK(every.peak_activation_bytes < plain.peak_activation_bytes * 6 / 10);
    CHECK(second.peak_activation_bytes < plain.peak_activation_bytes * 8 / 10);
    CHECK(second.peak_activation_bytes > every.peak_activation_bytes);
  }
}
