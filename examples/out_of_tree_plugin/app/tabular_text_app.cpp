// tabular_text_app.cpp: app/tabular_text — a text plus a variable-length list of numbers per row, classified
// by model/tabular_text. Only the task is written here; the SDK's supervised base trains, evaluates and
// predicts, and pads the readings feature to the longest list of each batch (with a mask).
#include <ethost/app/predict_driver.h>
#include <ethost/app/supervised_app.h>
#include <ethost/plugin.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace et::apps::tabular_text {

class TabularTextApp final : public app::SupervisedApp {
 public:
  TabularTextApp(const ConfigView& cfg, Context& ctx)
      : SupervisedApp(cfg, ctx, "tabular_text"),
        text_(cfg.get_string("data.first_sequence")),
        readings_(cfg.get_string("data.readings_column")) {}

 private:
  void bind_columns(const std::vector<data::Column>& cols, bool need_label,
                    const std::string& where) override {
    col_text_ = data::column_index(cols, text_, "data.first_sequence (" + where + ")");
    col_readings_ = data::column_index(cols, readings_, "data.readings_column (" + where + ")");
    if (need_label)
      col_label_ = data::column_index(cols, options().label_name, "data.label_name (" + where + ")");
  }

  // The custom feature: "readings", float32, padded with 0 along its only dimension, mask "readings_mask".
  data::FeatureSchema features() const override {
    auto s = data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
    s.sequence("readings", 0.0, "readings_mask", data::DType::float32);
    s.length_feature = "input_ids";  // tokens/s counts text tokens
    s.scalar("labels");
    return s;
  }

  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override {
    std::vector<float> values;
    std::stringstream ss(row.values[col_readings_]);
    for (std::string cell; std::getline(ss, cell, ',');) {
      char* end = nullptr;
      double v = std::strtod(cell.c_str(), &end);
      if (cell.empty() || *end != '\0' || !std::isfinite(v)) {
        reason = "reading '" + cell + "' is not a number";
        return std::nullopt;
      }
      values.push_back(static_cast<float>(v));
    }
    if (values.empty()) {
      reason = "no readings";
      return std::nullopt;
    }
    text::Encoding enc = tokenizer().encode(row.values[col_text_]);
    data::Example ex;
    ex.set("input_ids",
           data::Feature::sequence(std::vector<int32_t>(enc.input_ids.begin(), enc.input_ids.end())));
    ex.set("token_type_ids", data::Feature::sequence(std::vector<int8_t>(enc.token_type_ids.size(), 0)));
    ex.set("readings", data::Feature::sequence(std::move(values)));
    if (!with_label) return ex;
    int64_t id = labels().id(row.values[col_label_]);
    if (id < 0) {
      reason = "label '" + row.values[col_label_] + "' is not one of the labels (" + labels().list() + ")";
      return std::nullopt;
    }
    ex.set("labels", data::Feature::scalar(id));
    return ex;
  }

  app::EvalReport evaluate_on(const data::Dataset& ds) override {
    auto out = forward_dataset(ds, {"logits", "loss"});
    auto pred_t = out.at("logits").argmax(1).contiguous();
    std::vector<int64_t> pred(pred_t.data_ptr<int64_t>(), pred_t.data_ptr<int64_t>() + pred_t.numel()), gold;
    for (const auto& e : ds.examples) gold.push_back(static_cast<int64_t>(e.at("labels").value(0)));
    app::EvalReport r;
    r.metrics["accuracy"] = metrics::accuracy(pred, gold);
    r.metrics["loss"] = out.at("loss").item<double>();
    std::vector<int64_t> counts(size_t(labels().size()), 0);
    for (int64_t g : gold) ++counts[size_t(g)];
    double majority =
        static_cast<double>(*std::max_element(counts.begin(), counts.end())) / double(gold.size());
    r.text = "tabular_text: accuracy " + std::to_string(r.metrics["accuracy"]) + " (majority baseline " +
             std::to_string(majority) + ")\n";
    return r;
  }

  std::pair<std::string, bool> main_metric() const override { return {"accuracy", true}; }
  std::vector<std::string> input_columns() const override { return {text_, readings_}; }
  std::vector<OutputColumn> output_columns() const override {
    return {{"predictions", "the label"}, {"probabilities", "softmax per label, comma-separated"}};
  }

  void postprocess(const TensorMap& outputs, const data::Batch&, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override {
    at::Tensor probs = torch::softmax(outputs.at("logits").to(torch::kFloat), 1).contiguous();
    const int64_t L = probs.size(1);
    for (size_t r = 0; r < items.size(); ++r) {
      const float* p = probs.data_ptr<float>() + int64_t(r) * L;
      std::vector<std::string> row;
      for (const auto& c : columns)
        row.push_back(c == "predictions" ? labels().names[size_t(std::max_element(p, p + L) - p)]
                                         : app::csv_floats(p, L));
      cells.push_back(std::move(row));
    }
  }

  std::string text_, readings_;
  size_t col_text_ = 0, col_readings_ = 0, col_label_ = 0;
};

}  // namespace et::apps::tabular_text

ETHOST_PLUGIN(reg) {
  reg.add_app("tabular_text", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::tabular_text::TabularTextApp>(cfg, ctx);
  });
}
