// init.cpp: HF-style weight initialisation.
#include "ethost/nn/init.h"

#include <torch/torch.h>

#include "ethost/nn/heads.h"

namespace et::nn {

void init_bert_weights(torch::nn::Module& root, double range) {
  torch::NoGradGuard no_grad;
  for (auto& m : root.modules(/*include_self=*/true)) {
    if (auto* lin = m->as<torch::nn::Linear>()) {
      lin->weight.normal_(0.0, range);
      if (lin->bias.defined()) lin->bias.zero_();
    } else if (auto* head = m->as<LinearHeadImpl>()) {
      head->weight.normal_(0.0, range);
      head->bias.zero_();
    } else if (auto* emb = m->as<torch::nn::Embedding>()) {
      emb->weight.normal_(0.0, range);
      auto pad = emb->options.padding_idx();
      if (pad && *pad >= 0) emb->weight[*pad].zero_();
    } else if (auto* ln = m->as<torch::nn::LayerNorm>()) {
      ln->weight.fill_(1.0);
      ln->bias.zero_();
    } else if (auto* lm = m->as<LMPredictionHeadImpl>()) {
      lm->bias.zero_();
    }
  }
}

SeedScope::SeedScope(uint64_t seed) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  saved_ = gen.get_state();
  gen.set_current_seed(seed);
}

SeedScope::~SeedScope() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(saved_);
}

}  // namespace et::nn
