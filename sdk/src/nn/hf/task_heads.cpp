// task_heads.cpp: head assembly under HF names and the forward with HF's loss rules.
#include "ethost/nn/hf/task_heads.h"

#include <torch/torch.h>

#include <algorithm>

#include "ethost/nn/hf/losses.h"
#include "ethost/nn/model_types.h"
#include "ethost/nn/pooling.h"

namespace et::nn::hf {
namespace {

const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}

}  // namespace

ClsImpl::ClsImpl(const TransformerConfig& cfg, bool mlm, bool nsp, const at::Tensor& word_embeddings) {
  if (mlm) predictions = register_module("predictions", LMPredictionHead(cfg, word_embeddings));
  if (nsp) seq_relationship = register_module("seq_relationship", LinearHead(cfg.hidden_size, 2, 0.0));
}

TaskHeads::TaskHeads(torch::nn::Module& net, const ModelOptions& o, const at::Tensor& word_embeddings)
    : heads_(o.heads), problem_type_(o.arch.problem_type), pooling_(o.pooling) {
  const auto& a = o.arch;
  const bool roberta_style = model_type_info(a.model_type, "model_type").roberta_heads;
  const double cls_dropout = a.classifier_dropout.value_or(a.hidden_dropout_prob);
  if (has("sequence_classification")) {
    if (roberta_style)
      roberta_classifier = net.register_module("classifier", RobertaClassificationHead(a, a.num_labels()));
    else
      classifier = net.register_module("classifier", LinearHead(a.hidden_size, a.num_labels(), cls_dropout));
  }
  if (has("token_classification"))
    classifier = net.register_module("classifier", LinearHead(a.hidden_size, a.num_labels(), cls_dropout));
  if (has("multiple_choice"))  // HF BertForMultipleChoice: classifier [1, hidden] on the pooled output
    classifier = net.register_module("classifier", LinearHead(a.hidden_size, 1, cls_dropout));
  if (has("crf")) crf = net.register_module("crf", Crf(a.num_labels()));
  if (has("span")) qa_outputs = net.register_module("qa_outputs", LinearHead(a.hidden_size, 2, 0.0));
  if (has("mlm") || has("nsp"))
    cls = net.register_module("cls", Cls(a, has("mlm"), has("nsp"), word_embeddings));
  if (has("sentence_embedding") && o.embedding_size > 0)
    projection = net.register_module("projection", torch::nn::Linear(a.hidden_size, o.embedding_size));
}

bool TaskHeads::has(const std::string& h) const {
  return std::find(heads_.begin(), heads_.end(), h) != heads_.end();
}

void TaskHeads::forward(const at::Tensor& last, const at::Tensor& pooled, const TensorMap& in,
                        TensorMap& out) {
  if (has("sequence_classification")) {
    auto logits = roberta_classifier ? roberta_classifier->forward(last) : classifier->forward(pooled);
    out["logits"] = logits;
    if (const auto* y = find(in, "labels"))
      add_loss(out, "sequence_loss", sequence_classification_loss(logits, *y, problem_type_));
  }
  if (has("multiple_choice")) {
    // The trunk ran on [B * C, T]; "input_ids" is still [B, C, T] here.
    const auto* ids = find(in, "input_ids");
    const int64_t choices = ids && ids->dim() == 3 ? ids->size(1) : 1;
    auto logits = classifier->forward(pooled).view({-1, choices});
    out["logits"] = logits;
    if (const auto* y = find(in, "labels")) add_loss(out, "choice_loss", classification_loss(logits, *y));
  }
  if (has("token_classification")) {
    auto logits = classifier->forward(last);
    out["token_logits"] = logits;
    const auto* y = find(in, "token_labels");
    if (crf) {
      const auto* lm = find(in, "label_mask");
      const auto* am = find(in, "attention_mask");
      at::Tensor mask = lm   ? *lm
                        : y  ? (*y != -100)
                        : am ? *am
                             : torch::ones(logits.sizes().slice(0, 2), torch::kLong);
      Gathered g = gather_positions(logits, mask);
      if (y) add_loss(out, "token_loss", crf->nll(g.values, y->gather(1, g.index), g.mask));
      if (!crf->is_training()) {
        at::Tensor path = crf->decode(g.values, g.mask);
        at::Tensor tags = torch::full(mask.sizes(), -1, torch::kLong);
        out["token_tags"] = tags.scatter(1, g.index, path);
      }
    } else if (y) {
      add_loss(out, "token_loss", classification_loss(logits, *y));
    }
  }
  if (has("span")) {
    auto parts = qa_outputs->forward(last).split(1, -1);
    auto start = parts[0].squeeze(-1).contiguous(), end = parts[1].squeeze(-1).contiguous();
    out["start_logits"] = start;
    out["end_logits"] = end;
    const auto* s = find(in, "start_positions");
    const auto* e = find(in, "end_positions");
    if (s && e) add_loss(out, "span_loss", span_loss(start, end, *s, *e));
  }
  if (has("mlm")) {
    const auto* pos = find(in, "mlm_positions");
    auto hidden = pos ? last.reshape({-1, last.size(-1)}).index_select(0, *pos) : last;
    auto logits = cls->predictions->forward(hidden);
    out["mlm_logits"] = logits;
    if (const auto* y = find(in, "mlm_labels")) {
      at::Tensor labels = *y;
      if (pos && labels.dim() == 2) labels = labels.reshape({-1}).index_select(0, *pos);
      add_loss(out, "mlm_loss", classification_loss(logits, labels));
    }
  }
  if (has("sentence_embedding")) {
    const auto* am = find(in, "attention_mask");
    at::Tensor v = pooling_ == "pooler" ? pooled : pool_tokens(last, am ? *am : at::Tensor(), pooling_);
    out["sentence_embedding"] = projection ? projection->forward(v) : v;
  }
  if (has("nsp")) {
    auto logits = cls->seq_relationship->forward(pooled);
    out["nsp_logits"] = logits;
    if (const auto* y = find(in, "next_sentence_label"))
      add_loss(out, "nsp_loss", classification_loss(logits, *y));
  }
}

}  // namespace et::nn::hf
