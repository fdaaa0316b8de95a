// checkpoint.cpp: checkpoint name mapping and HF's loading rules for BERT-family networks.
#include "ethost/nn/hf/checkpoint.h"

#include <torch/torch.h>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/io/state_dict.h"
#include "ethost/nn/load_weights.h"
#include "ethost/nn/model_types.h"

namespace et::nn::hf {
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

}  // namespace

NameMap NameMap::bert_family(const std::string& model_type) {
  const ModelTypeInfo& t = model_type_info(model_type, "model_type");
  NameMap m;
  m.trunk = t.trunk_prefix;
  m.ignored = {"*position_ids",
               "*embeddings.token_type_ids",
               "cls.predictions.decoder.weight",
               "cls.predictions.decoder.bias",
               "lm_head.decoder.weight",
               "lm_head.decoder.bias"};
  if (t.roberta_heads)
    m.renames = {{"lm_head.dense.", "cls.predictions.transform.dense."},
                 {"lm_head.layer_norm.", "cls.predictions.transform.LayerNorm."},
                 {"lm_head.bias", "cls.predictions.bias"}};
  return m;
}

std::string NameMap::to_module(const std::string& key, bool prefixed) const {
  for (const auto& ig : ignored)
    if (ig.rfind('*', 0) == 0 ? ends_with(key, ig.substr(1)) : key == ig) return "";
  for (const auto& [from, to] : renames)
    if (starts_with(key, from)) return to + key.substr(from.size());
  if (!prefixed &&
      (starts_with(key, "embeddings.") || starts_with(key, "encoder.") || starts_with(key, "pooler.")))
    return trunk + "." + key;  // a bare trunk checkpoint (BertModel)
  return key;
}

std::string NameMap::to_checkpoint(const std::string& name) const {
  for (const auto& [from, to] : renames)
    if (starts_with(name, to)) return from + name.substr(to.size());
  return name;
}

bool NameMap::may_be_missing(const std::string& name) const {
  if (!starts_with(name, trunk + ".") || starts_with(name, trunk + ".pooler.")) return true;
  for (const auto& p : new_modules)
    if (starts_with(name, p)) return true;
  return false;
}

void load_pretrained(torch::nn::Module& net, const ModelOptions& opts, const NameMap& names,
                     const log::Logger& log) {
  std::string used;
  io::StateDict weights = io::load_checkpoint_weights(opts.model_dir, &used);
  bool prefixed = false;
  for (const auto& [k, v] : weights)
    if (starts_with(k, names.trunk + ".")) prefixed = true;
  LoadReport r =
      load_weights(net, weights, [&](const std::string& key) { return names.to_module(key, prefixed); });
  log.info("loaded ", r.loaded.size(), " tensors from ", used);

  std::vector<std::string> bad_mismatch, head_mismatch;
  for (const auto& m : r.mismatched) (names.may_be_missing(m) ? head_mismatch : bad_mismatch).push_back(m);
  if (!bad_mismatch.empty())
    throw DataError("encoder tensors have other shapes than the model: " + join_some(bad_mismatch), used,
                    "the checkpoint's config.json does not match its weights");
  if (!head_mismatch.empty()) {
    if (!opts.ignore_mismatched_heads)
      throw ConfigError(
          "task head shapes differ from the checkpoint: " + join_some(head_mismatch) + " (the task has " +
              std::to_string(opts.arch.num_labels()) + " labels)",
          used,
          "use the checkpoint's labels, or set model.ignore_mismatched_heads = true to re-initialise the "
          "head");
    log.warn("re-initialised task heads with other shapes than the checkpoint's: ",
             join_some(head_mismatch, 100));
  }
  std::vector<std::string> missing_encoder, missing_heads;
  for (const auto& m : r.missing) (names.may_be_missing(m) ? missing_heads : missing_encoder).push_back(m);
  if (!missing_encoder.empty())
    throw DataError("checkpoint lacks encoder weights: " + join_some(missing_encoder), used,
                    "is this a " + names.trunk + " checkpoint of the same architecture?");
  if (opts.strict && (!missing_heads.empty() || !r.unexpected.empty()))
    throw DataError("strict loading: missing " +
                        (missing_heads.empty() ? "nothing" : join_some(missing_heads)) + "; unexpected " +
                        (r.unexpected.empty() ? "nothing" : join_some(r.unexpected)),
                    used, "set model.strict = false to initialise missing heads and ignore unused tensors");
  if (!missing_heads.empty())
    log.warn("newly initialised (not in the checkpoint; train before use): ", join_some(missing_heads, 1000));
  if (!r.unexpected.empty())
    log.info("checkpoint tensors not used by this task: ", join_some(r.unexpected, 1000));
}

void save_pretrained(const torch::nn::Module& net, const TransformerConfig& a, const NameMap& names,
                     const std::string& dir) {
  io::StateDict out;
  // HF 4.30 writes the position_ids buffer first.
  out.set(names.trunk + ".embeddings.position_ids",
          torch::arange(a.max_position_embeddings, torch::kLong).unsqueeze(0));
  for (const auto& [name, t] : module_tensors(net))
    out.set(names.to_checkpoint(name), t.detach().contiguous());
  io::write_safetensors(dir + "/model.safetensors", out, {{"format", "pt"}});
  io::write_file_atomic(dir + "/config.json", to_hf_config_json(a));
}

}  // namespace et::nn::hf
