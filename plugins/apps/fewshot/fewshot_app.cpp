// fewshot_app.cpp: what PET does with rows, batches and outputs — cloze encoding from the pattern, verbalizer
// scores at the masks, the PET loss, accuracy, prediction cells; the supervised-app base does the rest.
#include "fewshot_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/error.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "scoring.h"

namespace et::apps::fewshot {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

size_t total_size(const std::vector<std::vector<int64_t>>& parts) {
  size_t n = 0;
  for (const auto& p : parts) n += p.size();
  return n;
}

}  // namespace

FewshotApp::FewshotApp(const ConfigView& c, Context& ctx) : SupervisedApp(c, ctx, "fewshot") {
  if (!c.get_bool("enable_fewshot"))
    throw ConfigError("enable_fewshot is false", c.where("enable_fewshot"),
                      "app/fewshot is the few-shot app; use app/text_classify for plain fine-tuning");
  pattern_spec_ = c.get_string("pattern");
  label_desc_ = c.get_string("label_desc");
  pattern_ = parse_pattern(pattern_spec_, c.get_string("data.first_sequence"),
                           c.get_string("data.second_sequence"), c.where("pattern"));
  type_ = c.get_string("type");
  if (type_ == "p_tuning" && pattern_.pseudo_tokens() == 0)
    throw ConfigError("type = p_tuning needs trainable prompt tokens: the pattern '" + pattern_spec_ +
                          "' has no <pseudo> item",
                      c.where("pattern"),
                      "add <pseudo> or <pseudo>*N items, e.g. \"sent1,<pseudo>*3,label\"");
  if (type_ != "p_tuning" && pattern_.pseudo_tokens() > 0)
    throw ConfigError(
        "the pattern's <pseudo> items are P-tuning's trainable prompt tokens, but type = " + type_,
        c.where("type"), "set type = \"p_tuning\", or write literal text instead");
}

void FewshotApp::run(Mode mode) {
  if (mode == Mode::train && options().label_values.empty())
    throw ConfigError("app/fewshot maps the words of label_desc onto the labels in order, so it needs them",
                      root().where("data.label_enumerate_values"),
                      "set data.label_enumerate_values, e.g. \"Negative,Positive\" for label_desc \"差,好\"");
  if (mode == Mode::train && options().pretrained.empty())
    logger().warn(
        "PET from scratch: the MLM head starts random, so the label words mean nothing yet; few-shot "
        "learning needs an MLM-pretrained model (pretrain_model_name_or_path, e.g. "
        "scripts/pretrain-small.sh's)");
  if (mode == Mode::train && root().get_int("self_training.generations") > 0) {
    self_train();
    return;
  }
  SupervisedApp::run(mode);
}

std::string FewshotApp::describe_task() const {
  // Logged before the verbalizers are tokenized: count the sets in label_desc.
  const auto sets = 1 + std::count(label_desc_.begin(), label_desc_.end(), '/');
  std::string method = type_ == "p_tuning" ? "P-tuning" : "PET";
  if (sets > 1) method = type_ == "p_tuning" ? "P-tuning (fuzzy verbalizers)" : "Fuzzy-PET";
  return method + " cloze classification (pattern '" + pattern_spec_ + "', " + std::to_string(sets) +
         " verbalizer set(s)" +
         (type_ == "p_tuning" ? ", " + std::to_string(pattern_.pseudo_tokens()) + " prompt token(s)" : "") +
         ")";
}

void FewshotApp::build_verbalizers() {
  const auto& tok = tokenizer();
  auto words =
      parse_verbalizers(label_desc_, static_cast<size_t>(labels().size()), root().where("label_desc"));
  std::vector<std::vector<std::vector<int64_t>>> ids(words.size());
  for (size_t s = 0; s < words.size(); ++s)
    for (size_t l = 0; l < words[s].size(); ++l) {
      std::vector<int64_t> w;
      for (const auto& t : tok.tokenize(words[s][l])) {
        if (t.id == tok.vocab().unk_id())
          throw ConfigError("label word '" + words[s][l] + "' (label '" + labels().names[l] +
                                "') is not in the vocabulary: it tokenizes to [UNK]",
                            root().where("label_desc"), "choose a word whose characters are in vocab.txt");
        w.push_back(t.id);
      }
      if (w.empty())
        throw ConfigError("label word '" + words[s][l] + "' makes no tokens", root().where("label_desc"));
      ids[s].push_back(std::move(w));
    }
  table_ = make_table(ids, std::move(words));
  std::ostringstream os;
  for (int64_t l = 0; l < table_.labels; ++l) {
    os << (l ? "; " : "") << labels().names[size_t(l)] << " <- ";
    for (int64_t s = 0; s < table_.sets; ++s) os << (s ? "/" : "") << table_.words[size_t(s)][size_t(l)];
  }
  logger().info("verbalizers: ", os.str(), " (", table_.mask_len, " mask token(s))");
}

void FewshotApp::bind_columns(const std::vector<data::Column>& cols, bool need_label,
                              const std::string& where) {
  const bool first_bind = table_.sets == 0;
  if (first_bind) build_verbalizers();
  item_col_.assign(pattern_.items.size(), 0);
  literal_ids_.assign(pattern_.items.size(), {});
  size_t fixed = 2 + size_t(table_.mask_len);
  for (size_t i = 0; i < pattern_.items.size(); ++i) {
    const auto& it = pattern_.items[i];
    if (it.kind == PatternItem::Kind::column) {
      item_col_[i] = data::column_index(cols, it.value, root().where("pattern") + " (" + where + ")");
    } else if (it.kind == PatternItem::Kind::text) {
      for (const auto& t : tokenizer().tokenize(it.value)) literal_ids_[i].push_back(t.id);
      fixed += literal_ids_[i].size();
    } else if (it.kind == PatternItem::Kind::pseudo) {
      literal_ids_[i] = prompt_ids(it);
      fixed += literal_ids_[i].size();
      if (first_bind && it.first == 0) {
        std::string shown;
        for (int64_t id : literal_ids_[i])
          shown += (shown.empty() ? "" : " ") + tokenizer().vocab().token(id);
        logger().info("P-tuning: prompt tokens ", shown, pattern_.pseudo_tokens() > it.count ? " ..." : "",
                      " (", pattern_.pseudo_tokens(), " in all; their embedding rows train with the model)");
      }
    }
  }
  if (static_cast<int64_t>(fixed) >= options().sequence_length)
    throw ConfigError("the pattern's literal text, the mask slot and [CLS]/[SEP] take " +
                          std::to_string(fixed) + " tokens, leaving none of data.sequence_length (" +
                          std::to_string(options().sequence_length) + ") for the text",
                      root().where("data.sequence_length"),
                      "raise data.sequence_length or shorten the pattern");
  if (need_label)
    col_label_ = data::column_index(cols, options().label_name, "data.label_name (" + where + ")");
}

std::optional<data::Example> FewshotApp::encode(const Row& row, std::string& reason, bool with_label) const {
  const auto& tok = tokenizer();
  const auto& items = pattern_.items;
  std::vector<std::vector<int64_t>> col_ids(items.size());
  size_t fixed = 2 + size_t(table_.mask_len);
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind != PatternItem::Kind::column) {
      fixed += literal_ids_[i].size();
      continue;
    }
    int64_t bad = 0;
    for (const auto& t : tok.tokenize(row.values[item_col_[i]], &bad)) col_ids[i].push_back(t.id);
    if (bad > 0) {
      reason = "column '" + items[i].value + "' is not valid UTF-8";
      return std::nullopt;
    }
  }
  // Longest first: cut the longest text until the cloze fits data.sequence_length.
  const size_t budget = size_t(options().sequence_length) - fixed;
  while (total_size(col_ids) > budget) {
    auto longest = std::max_element(col_ids.begin(), col_ids.end(),
                                    [](const auto& a, const auto& b) { return a.size() < b.size(); });
    longest->pop_back();
  }
  text::Encoding enc;
  std::vector<int64_t> mask_pos;
  enc.input_ids.push_back(tok.vocab().cls_id());
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == PatternItem::Kind::label) {
      for (int64_t j = 0; j < table_.mask_len; ++j) {
        mask_pos.push_back(static_cast<int64_t>(enc.input_ids.size()));
        enc.input_ids.push_back(tok.vocab().mask_id());
      }
    } else {
      const auto& ids = items[i].kind == PatternItem::Kind::column ? col_ids[i] : literal_ids_[i];
      enc.input_ids.insert(enc.input_ids.end(), ids.begin(), ids.end());
    }
  }
  enc.input_ids.push_back(tok.vocab().sep_id());
  enc.token_type_ids.assign(enc.input_ids.size(), 0);
  data::Example ex;
  app::set_bert_text(ex, enc);
  ex.set("mask_positions", data::Feature::sequence(std::move(mask_pos)));
  if (!with_label) return ex;
  const std::string& y = row.values[col_label_];
  int64_t id = labels().id(y);
  if (id < 0) {
    reason = "label '" + y + "' is not one of the labels (" + labels().list() + ")";
    return std::nullopt;
  }
  ex.set("labels", data::Feature::scalar(id));
  return ex;
}

// P-tuning's prompt tokens: the vocabulary's [unused1], [unused2], ... rows, in pattern order. Their
// embeddings train with the model; no text ever tokenizes to them.
std::vector<int64_t> FewshotApp::prompt_ids(const PatternItem& item) const {
  std::vector<int64_t> ids;
  for (int64_t k = item.first + 1; k <= item.first + item.count; ++k) {
    const std::string token = "[unused" + std::to_string(k) + "]";
    const int64_t id = tokenizer().vocab().find(token);
    if (id < 0)
      throw ConfigError("the pattern's <pseudo> prompt token " + std::to_string(k) +
                            " is the vocabulary's '" + token + "', which this vocab.txt lacks",
                        root().where("pattern"),
                        "use fewer <pseudo> tokens, or a vocabulary with [unused1]..[unusedN] rows (BERT's)");
    ids.push_back(id);
  }
  return ids;
}

data::FeatureSchema FewshotApp::features() const {
  auto s = data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
  s.tensor("mask_positions", data::DType::int64);
  s.scalar("labels");
  return s;
}

void FewshotApp::configure_model(Config& mc) const { mc.set_string_list("heads", {"mlm"}, "app/fewshot"); }

TensorMap FewshotApp::model_inputs(const data::Batch& b) {
  TensorMap in = b.tensors;
  in["mlm_positions"] = flat_positions(in.at("mask_positions"), in.at("input_ids").size(1));
  in.erase("mask_positions");
  in.erase("labels");
  return in;
}

train::LossTerms FewshotApp::loss(const TensorMap& out, const data::Batch& b, const TensorMap&) {
  auto scores = verbalizer_log_probs(out.at("mlm_logits"), table_);
  return {pet_loss(scores, b.tensors.at("labels")), {}};
}

// Not forward_dataset(): it would keep every batch's [B * M, vocab] mlm_logits; this reduces each batch to
// [B, labels] first.
at::Tensor FewshotApp::dataset_probabilities(const data::Dataset& ds) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  const auto bs = static_cast<size_t>(std::max<int64_t>(1, options().eval_batch_size));
  for (size_t start = 0; start < ds.examples.size(); start += bs) {
    std::vector<int64_t> idx(std::min(bs, ds.examples.size() - start));
    std::iota(idx.begin(), idx.end(), static_cast<int64_t>(start));
    data::Batch b = data::make_batch(ds, idx);
    TensorMap out = model().forward(model_inputs(b));
    parts.push_back(label_probabilities(verbalizer_log_probs(out.at("mlm_logits"), table_)));
  }
  return torch::cat(parts, 0);
}

app::EvalReport FewshotApp::evaluate_on(const data::Dataset& ds) {
  app::EvalReport r;
  at::Tensor probs = dataset_probabilities(ds);
  auto pred_t = probs.argmax(1).contiguous();
  std::vector<int64_t> pred(pred_t.data_ptr<int64_t>(), pred_t.data_ptr<int64_t>() + pred_t.numel()), gold;
  for (auto& e : ds.examples) gold.push_back(static_cast<int64_t>(e.at("labels").value(0)));
  auto y = torch::tensor(gold, torch::kLong);
  r.metrics["loss"] = torch::nll_loss(probs.clamp_min(1e-12).log(), y).item<double>();
  auto rep = metrics::classification_report(pred, gold, labels().size(), labels().names);
  r.metrics["accuracy"] = rep.accuracy;
  r.metrics["macro_f1"] = rep.macro_f1;
  std::vector<int64_t> counts(size_t(labels().size()), 0);
  for (int64_t g : gold) ++counts[size_t(g)];
  auto best = std::max_element(counts.begin(), counts.end());
  double majority = static_cast<double>(*best) / static_cast<double>(gold.size());
  r.metrics["majority_baseline"] = majority;
  std::ostringstream text;
  text << "eval accuracy " << fmt(rep.accuracy) << " (majority-class baseline " << fmt(majority)
       << ", always '" << labels().names[size_t(best - counts.begin())] << "'), macro_f1 "
       << fmt(rep.macro_f1) << "\n"
       << metrics::format_classification_report(rep);
  r.text = text.str();
  return r;
}

std::vector<std::string> FewshotApp::input_columns() const { return pattern_.columns(); }

std::vector<OutputColumn> FewshotApp::output_columns() const {
  return {{"predictions", "the label whose verbalizer words score best"},
          {"probabilities",
           "per label, comma-separated: softmax over the labels, averaged over the verbalizer sets"},
          {"logits", "per label, the log of those probabilities, as a JSON array", true}};
}

void FewshotApp::postprocess(const TensorMap& outputs, const data::Batch&,
                             const std::vector<PredictItem>& items, const std::vector<std::string>& columns,
                             std::vector<std::vector<std::string>>& cells) const {
  at::Tensor probs = label_probabilities(verbalizer_log_probs(outputs.at("mlm_logits"), table_)).contiguous();
  at::Tensor logs = probs.clamp_min(1e-30).log().contiguous();
  const int64_t L = probs.size(1);
  for (size_t r = 0; r < items.size(); ++r) {
    const float* pr = probs.data_ptr<float>() + int64_t(r) * L;
    const float* lg = logs.data_ptr<float>() + int64_t(r) * L;
    std::vector<std::string> row;
    for (const auto& col : columns) {
      if (col == "predictions")
        row.push_back(labels().names[size_t(std::max_element(pr, pr + L) - pr)]);
      else if (col == "probabilities")
        row.push_back(app::csv_floats(pr, L));
      else
        row.push_back(app::json_floats(lg, L));
    }
    cells.push_back(std::move(row));
  }
}

void FewshotApp::save_extra(const std::string& dir) const {
  nlohmann::json j{{"type", type_},
                   {"prompt_tokens", pattern_.pseudo_tokens()},
                   {"pattern", pattern_spec_},
                   {"label_desc", label_desc_},
                   {"labels", labels().names},
                   {"verbalizers", table_.words},
                   {"mask_tokens", table_.mask_len}};
  std::ofstream(dir + "/fewshot.json") << j.dump(2) << "\n";
}

}  // namespace et::apps::fewshot
