// fewshot_app.cpp: what PET does with rows, batches and outputs — cloze encoding from the pattern, verbalizer
// scores at the masks, the PET loss, accuracy, prediction cells; the supervised-app base does the rest.
#include "fewshot_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/error.h>
#include <ethost/text/split.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "row_table.h"
#include "scoring.h"
#include "self_training.h"

namespace et::apps::fewshot {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

}  // namespace

FewshotApp::FewshotApp(const ConfigView& c, Context& ctx) : SupervisedApp(c, ctx, "fewshot") {
  if (!c.get_bool("enable_fewshot"))
    throw ConfigError("enable_fewshot is false", c.where("enable_fewshot"),
                      "app/fewshot is the few-shot app; use app/text_classify for plain fine-tuning");
  pattern_spec_ = c.get_string("pattern");
  label_desc_ = c.get_string("label_desc");
  candidates_ = c.get_string("candidates_column");
  placeholder_ = c.get_string("candidate_placeholder");
  candidate_tokens_ = c.get_int("candidate_tokens");
  pooling_ = parse_pooling(c.get_string("fuzzy_pooling"));
  aux_weight_ = c.get_double("auxiliary_mlm.weight");
  aux_batch_ = c.get_int("auxiliary_mlm.batch_size");
  if (aux_weight_ > 0 && c.get_string_list("auxiliary_mlm.tables").empty())
    throw ConfigError(
        "auxiliary_mlm.weight > 0 needs unlabeled text", c.where("auxiliary_mlm.tables"),
        "name the task's unlabeled file, e.g. [\"data/fewclue/eprstmt/unlabeled.json\"], or set "
        "auxiliary_mlm.weight = 0");
  if (candidate_tokens_ < 1 || candidate_tokens_ > 32)
    throw ConfigError("candidate_tokens = " + std::to_string(candidate_tokens_) + " is out of range",
                      c.where("candidate_tokens"), "give the longest candidate's token count, 1..32");
  if (!candidates_.empty() && !label_desc_.empty())
    throw ConfigError(
        "label_desc is set, but candidates_column ('" + candidates_ + "') gives each row its own label words",
        c.where("label_desc"), "unset one of them");
  pattern_ = parse_pattern(pattern_spec_, c.get_string("data.first_sequence"),
                           c.get_string("data.second_sequence"), c.where("pattern"), !placeholder_.empty());
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
  if (!candidates_.empty()) {  // each row brings its own label words
    table_ = VerbalizerTable{};
    table_.sets = 1;
    table_.labels = labels().size();
    table_.mask_len = candidate_tokens_;
    logger().info("verbalizers: each row's candidates (column '", candidates_, "'), label l = candidate l, ",
                  table_.mask_len, " mask token(s)");
    return;
  }
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
  if (!candidates_.empty())
    col_candidates_ = data::column_index(cols, candidates_, "candidates_column (" + where + ")");
}

namespace {

// A run of the cloze's token ids; truncation cuts a text's end, or the start of the text before the mask.
struct Piece {
  std::vector<int64_t> ids;
  bool text = false;       // a column's text (truncatable)
  bool cut_front = false;  // the text before a candidate_placeholder: drop its first tokens
  bool mask = false;       // the mask slot
};

size_t text_size(const std::vector<Piece>& ps) {
  size_t n = 0;
  for (const auto& p : ps) n += p.text ? p.ids.size() : 0;
  return n;
}

}  // namespace

bool FewshotApp::cloze(const Row& row, text::Encoding& enc, std::vector<int64_t>& mask_pos,
                       std::string& reason) const {
  const auto& tok = tokenizer();
  const auto& items = pattern_.items;
  std::vector<Piece> pieces;
  size_t fixed = 2 + size_t(table_.mask_len);
  bool placed = false;
  auto add_text = [&](const std::string& s, bool cut_front) {
    Piece p{{}, true, cut_front, false};
    int64_t bad = 0;
    for (const auto& t : tok.tokenize(s, &bad)) p.ids.push_back(t.id);
    pieces.push_back(std::move(p));
    return bad == 0;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == PatternItem::Kind::label) {
      pieces.push_back({{}, false, false, true});
    } else if (items[i].kind != PatternItem::Kind::column) {
      pieces.push_back({literal_ids_[i], false, false, false});
      fixed += literal_ids_[i].size();
    } else {
      const std::string& v = row.values[item_col_[i]];
      const size_t at = placeholder_.empty() || placed ? std::string::npos : v.find(placeholder_);
      bool ok = true;
      if (at == std::string::npos) {
        ok = add_text(v, false);
      } else {  // the mask slot replaces the placeholder
        ok = add_text(v.substr(0, at), true);
        pieces.push_back({{}, false, false, true});
        ok = add_text(v.substr(at + placeholder_.size()), false) && ok;
        placed = true;
      }
      if (!ok) {
        reason = "column '" + items[i].value + "' is not valid UTF-8";
        return false;
      }
    }
  }
  if (!placeholder_.empty() && !placed) {
    reason = "no column of the pattern holds candidate_placeholder '" + placeholder_ + "'";
    return false;
  }
  // Longest first: cut the longest text until the cloze fits data.sequence_length (the text before the mask
  // loses its start, so the mask keeps its context).
  const size_t budget = size_t(options().sequence_length) - fixed;
  while (text_size(pieces) > budget) {
    auto longest = std::max_element(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
      return (a.text ? a.ids.size() : 0) < (b.text ? b.ids.size() : 0);
    });
    if (longest->cut_front)
      longest->ids.erase(longest->ids.begin());
    else
      longest->ids.pop_back();
  }
  enc.input_ids.push_back(tok.vocab().cls_id());
  for (const auto& p : pieces) {
    if (!p.mask) {
      enc.input_ids.insert(enc.input_ids.end(), p.ids.begin(), p.ids.end());
      continue;
    }
    for (int64_t j = 0; j < table_.mask_len; ++j) {
      mask_pos.push_back(static_cast<int64_t>(enc.input_ids.size()));
      enc.input_ids.push_back(tok.vocab().mask_id());
    }
  }
  enc.input_ids.push_back(tok.vocab().sep_id());
  enc.token_type_ids.assign(enc.input_ids.size(), 0);
  return true;
}

// candidates_column: each row's own label words (ChID's 7 idioms), label l being the row's candidate l.
bool FewshotApp::encode_candidates(const Row& row, data::Example& ex, std::string& reason) const {
  const auto& tok = tokenizer();
  const auto cands = split_list(row.values[col_candidates_], ',', EmptyItems::keep);
  const int64_t L = table_.labels, M = table_.mask_len;
  if (static_cast<int64_t>(cands.size()) != L) {
    reason = "column '" + candidates_ + "' lists " + std::to_string(cands.size()) + " candidates for " +
             std::to_string(L) + " labels (data.label_enumerate_values)";
    return false;
  }
  std::vector<int64_t> ids(size_t(L * M), 0);
  std::vector<float> w(ids.size(), 0.0f);
  for (int64_t l = 0; l < L; ++l) {
    std::vector<int64_t> t;
    for (const auto& tk : tok.tokenize(cands[size_t(l)])) t.push_back(tk.id);
    const bool unk = std::find(t.begin(), t.end(), tok.vocab().unk_id()) != t.end();
    if (t.empty() || static_cast<int64_t>(t.size()) > M || unk) {
      reason = "candidate '" + cands[size_t(l)] + "' " +
               (unk ? std::string("has a character outside the vocabulary")
                    : "makes " + std::to_string(t.size()) +
                          " tokens (candidate_tokens = " + std::to_string(M) + ")");
      return false;
    }
    for (size_t j = 0; j < t.size(); ++j) {
      ids[size_t(l * M) + j] = t[j];
      w[size_t(l * M) + j] = 1.0f / static_cast<float>(t.size());
    }
  }
  ex.set("candidate_ids", data::Feature::tensor(std::move(ids), {L * M}));
  ex.set("candidate_weights", data::Feature::tensor(std::move(w), {L * M}));
  return true;
}

std::optional<data::Example> FewshotApp::encode(const Row& row, std::string& reason, bool with_label) const {
  text::Encoding enc;
  std::vector<int64_t> mask_pos;
  if (!cloze(row, enc, mask_pos, reason)) return std::nullopt;
  data::Example ex;
  app::set_bert_text(ex, enc);
  ex.set("mask_positions", data::Feature::sequence(std::move(mask_pos)));
  if (!candidates_.empty() && !encode_candidates(row, ex, reason)) return std::nullopt;
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
  if (!candidates_.empty()) {
    s.tensor("candidate_ids", data::DType::int64);
    s.tensor("candidate_weights", data::DType::float32);
  }
  s.scalar("labels");
  return s;
}

void FewshotApp::configure_model(Config& mc) const { mc.set_string_list("heads", {"mlm"}, "app/fewshot"); }

TensorMap FewshotApp::model_inputs(const data::Batch& b) {
  TensorMap in = b.tensors;
  in["mlm_positions"] = flat_positions(in.at("mask_positions"), in.at("input_ids").size(1));
  for (const char* k : {"mask_positions", "labels", "candidate_ids", "candidate_weights"}) in.erase(k);
  return in;
}

at::Tensor FewshotApp::scores(const TensorMap& out, const TensorMap& batch) const {
  if (candidates_.empty()) return verbalizer_log_probs(out.at("mlm_logits"), table_);
  return candidate_log_probs(out.at("mlm_logits"), batch.at("candidate_ids"), batch.at("candidate_weights"),
                             table_.mask_len);
}

// PET's loss; with auxiliary_mlm.weight > 0 (training only), plus that weight x the MLM loss of a masked
// batch of unlabeled text through the same model.
train::LossTerms FewshotApp::loss(const TensorMap& out, const data::Batch& b, const TensorMap&) {
  at::Tensor pet = pet_loss(scores(out, b.tensors), b.tensors.at("labels"), pooling_);
  if (aux_weight_ <= 0 || !at::GradMode::is_enabled()) return {pet, {}};
  if (!aux_) aux_ = make_auxiliary_mlm();
  TensorMap in = aux_->next(aux_batch_ > 0 ? aux_batch_ : b.tensors.at("input_ids").size(0));
  for (auto& kv : in) kv.second = kv.second.to(pet.device());
  at::Tensor mlm = model().forward(in).at("mlm_loss");
  return {pet + aux_weight_ * mlm, {{"pet_loss", pet.detach()}, {"mlm_loss", mlm.detach()}}};
}

std::unique_ptr<AuxiliaryMlm> FewshotApp::make_auxiliary_mlm() {
  const ConfigView a = root().sub("auxiliary_mlm");
  std::string schema = a.get_string("input_schema");
  if (schema.empty()) schema = schema_without_label(root(), options().label_name);
  auto rows = read_table(context(), root(), options().reader, a.get_string_list("tables"), schema, logger(),
                         "auxiliary MLM rows", "auxiliary_mlm.tables");
  std::vector<size_t> cols;  // the pattern's text columns (the first two: a pair)
  for (const auto& name : pattern_.columns())
    if (name != candidates_ && cols.size() < 2)
      cols.push_back(data::column_index(rows.columns, name, root().where("auxiliary_mlm.input_schema")));
  std::set<std::string> excluded;  // texts of auxiliary_mlm.exclude_tables (e.g. the test set)
  const auto ex_files = a.get_string_list("exclude_tables");
  if (!ex_files.empty()) {
    auto ex = read_table(context(), root(), options().reader, ex_files, schema, logger(), "excluded rows",
                         "auxiliary_mlm.exclude_tables");
    for (const auto& r : ex.rows)
      for (const auto& name : pattern_.columns())
        if (name != candidates_)
          excluded.insert(text_key({r.values[data::column_index(ex.columns, name, "exclude_tables")]}));
  }
  text::TokenizerOptions to = tokenizer().options();
  to.max_length = options().sequence_length;
  to.pad_to_max_length = false;
  text::Tokenizer tok(tokenizer().vocab(), to);
  std::vector<MlmSequence> seqs;
  int64_t dropped = 0;
  for (const auto& r : rows.rows) {
    const std::string& ta = r.values[cols[0]];
    const std::string tb = cols.size() > 1 ? r.values[cols[1]] : std::string();
    if (excluded.count(text_key({ta})) || (!tb.empty() && excluded.count(text_key({tb})))) {
      ++dropped;
      continue;
    }
    text::Encoding enc = cols.size() > 1 ? tok.encode(ta, tb) : tok.encode(ta);
    if (enc.input_ids.size() < 3) continue;
    seqs.push_back({enc.input_ids, enc.token_type_ids, data::whole_word_ids(enc, ta, tb, nullptr)});
  }
  const int64_t cap = a.get_int("max_rows");
  std::mt19937_64 rng(static_cast<uint64_t>(root().get_int("train.seed", 42)) * 7919 + 1);
  if (cap > 0 && static_cast<int64_t>(seqs.size()) > cap) {
    std::shuffle(seqs.begin(), seqs.end(), rng);
    seqs.resize(size_t(cap));
  }
  if (seqs.empty())
    throw DataError("no unlabeled text to mask", root().where("auxiliary_mlm.tables"),
                    "check the files and auxiliary_mlm.input_schema");
  logger().info("auxiliary MLM: ", seqs.size(), " unlabeled sequences (", dropped,
                " dropped repeating an auxiliary_mlm.exclude_tables text), weight ", aux_weight_);
  data::MlmMaskingOptions mo;
  mo.probability = a.get_double("probability");
  return std::make_unique<AuxiliaryMlm>(std::move(seqs), mo, data::mask_vocab(tokenizer().vocab()),
                                        tokenizer().vocab().pad_id(), rng());
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
    parts.push_back(label_probabilities(scores(out, b.tensors), pooling_));
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

std::vector<std::string> FewshotApp::input_columns() const {
  auto cols = pattern_.columns();
  if (!candidates_.empty() && std::find(cols.begin(), cols.end(), candidates_) == cols.end())
    cols.push_back(candidates_);
  return cols;
}

std::vector<OutputColumn> FewshotApp::output_columns() const {
  return {{"predictions", "the label whose verbalizer words score best"},
          {"probabilities",
           "per label, comma-separated: the labels' distribution (several verbalizer sets: pooled by "
           "fuzzy_pooling)"},
          {"logits", "per label, the log of those probabilities, as a JSON array", true}};
}

void FewshotApp::postprocess(const TensorMap& outputs, const data::Batch& batch,
                             const std::vector<PredictItem>& items, const std::vector<std::string>& columns,
                             std::vector<std::vector<std::string>>& cells) const {
  at::Tensor probs = label_probabilities(scores(outputs, batch.tensors), pooling_).contiguous();
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
                   {"candidates_column", candidates_},
                   {"candidate_placeholder", placeholder_},
                   {"fuzzy_pooling", pooling_ == Pooling::words ? "words" : "sets"},
                   {"labels", labels().names},
                   {"verbalizers", table_.words},
                   {"mask_tokens", table_.mask_len}};
  std::ofstream(dir + "/fewshot.json") << j.dump(2) << "\n";
}

}  // namespace et::apps::fewshot
