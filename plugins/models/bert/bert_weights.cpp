// bert_weights.cpp: checkpoint name mapping (bare/prefixed keys, RoBERTa lm_head, tied decoder) and loading rules.
#include "bert_weights.h"

#include <ethost/error.h>
#include <ethost/io/safetensors.h>
#include <ethost/io/state_dict.h>
#include <ethost/nn/init.h>
#include <ethost/nn/load_weights.h>
#include <torch/torch.h>

namespace et::models::bert {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

std::string join_some(const std::vector<std::string>& v, size_t max = 8) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", … (" + std::to_string(v.size() - max) + " more)";
  return s;
}

// RoBERTa's lm_head names <-> our cls.predictions names.
const std::vector<std::pair<std::string, std::string>> kRobertaLm = {
    {"lm_head.dense.", "cls.predictions.transform.dense."},
    {"lm_head.layer_norm.", "cls.predictions.transform.LayerNorm."},
    {"lm_head.bias", "cls.predictions.bias"},
};

bool is_head(const std::string& name, const std::string& base) {
  return !starts_with(name, base + ".") || starts_with(name, base + ".pooler.");
}

}  // namespace

void load_pretrained(Network& net, const BertOptions& opts, const log::Logger& log) {
  std::string used;
  io::StateDict weights = io::load_checkpoint_weights(opts.model_dir, &used);
  const std::string base = net->base_prefix();
  bool prefixed = false;
  for (const auto& [k, v] : weights)
    if (starts_with(k, base + ".")) prefixed = true;

  auto map_name = [&](const std::string& key) -> std::string {
    if (ends_with(key, "position_ids") || ends_with(key, "embeddings.token_type_ids")) return "";  // buffers
    if (key == "cls.predictions.decoder.weight" || key == "cls.predictions.decoder.bias" ||
        starts_with(key, "lm_head.decoder."))
      return "";  // tied to the word embeddings / cls.predictions.bias
    for (const auto& [from, to] : kRobertaLm)
      if (starts_with(key, from)) return to + key.substr(from.size());
    if (!prefixed && (starts_with(key, "embeddings.") || starts_with(key, "encoder.") || starts_with(key, "pooler.")))
      return base + "." + key;  // a bare BertModel checkpoint
    return key;
  };
  nn::LoadReport r = nn::load_weights(*net, weights, map_name);
  log.info("loaded ", r.loaded.size(), " tensors from ", used);

  std::vector<std::string> bad_mismatch, head_mismatch;
  for (const auto& m : r.mismatched) (is_head(m, base) ? head_mismatch : bad_mismatch).push_back(m);
  if (!bad_mismatch.empty())
    throw DataError("encoder tensors have other shapes than the model: " + join_some(bad_mismatch), used,
                    "the checkpoint's config.json does not match its weights");
  if (!head_mismatch.empty()) {
    if (!opts.ignore_mismatched_heads)
      throw ConfigError("task head shapes differ from the checkpoint: " + join_some(head_mismatch) + " (the task has " +
                            std::to_string(opts.arch.num_labels()) + " labels)",
                        used,
                        "use the checkpoint's labels, or set model.ignore_mismatched_heads = true to re-initialise the "
                        "head");
    log.warn("re-initialised task heads with other shapes than the checkpoint's: ", join_some(head_mismatch, 100));
  }
  std::vector<std::string> missing_encoder, missing_heads;
  for (const auto& m : r.missing) (is_head(m, base) ? missing_heads : missing_encoder).push_back(m);
  if (!missing_encoder.empty())
    throw DataError("checkpoint lacks encoder weights: " + join_some(missing_encoder), used,
                    "is this a " + base + " checkpoint of the same architecture?");
  if (opts.strict && (!missing_heads.empty() || !r.unexpected.empty()))
    throw DataError("strict loading: missing " + (missing_heads.empty() ? "nothing" : join_some(missing_heads)) +
                        "; unexpected " + (r.unexpected.empty() ? "nothing" : join_some(r.unexpected)),
                    used, "set model.strict = false to initialise missing heads and ignore unused tensors");
  if (!missing_heads.empty())
    log.warn("newly initialised (not in the checkpoint; train before use): ", join_some(missing_heads, 1000));
  if (!r.unexpected.empty())
    log.info("checkpoint tensors not used by this task: ", join_some(r.unexpected, 1000));
}

void save_pretrained(const Network& net, const std::string& dir) {
  io::StateDict out;
  const std::string base = net->base_prefix();
  const auto& a = net->opts.arch;
  // HF 4.30 writes the position_ids buffer first.
  out.set(base + ".embeddings.position_ids", torch::arange(a.max_position_embeddings, torch::kLong).unsqueeze(0));
  for (const auto& [name, t] : nn::module_tensors(*net)) {
    std::string key = name;
    if (base == "roberta")
      for (const auto& [from, to] : kRobertaLm)
        if (starts_with(key, to)) key = from + key.substr(to.size());
    out.set(key, t.detach().contiguous());
  }
  io::write_safetensors(dir + "/model.safetensors", out, {{"format", "pt"}});
  io::write_file_atomic(dir + "/config.json", nn::to_hf_config_json(a));
}

}  // namespace et::models::bert
