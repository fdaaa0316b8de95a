// text_classify_app.cpp: app/text_classify — train / evaluate / predict, and the plugin's registration.
#include <ethost/sdk.h>
#include <ethost/data/dataset.h>
#include <ethost/io/state_dict.h>
#include <ethost/train/trainer.h>
#include <torch/torch.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tc_predict.h"
#include "tc_task.h"

namespace fs = std::filesystem;

namespace et::apps::text_classify {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

class TextClassifyApp final : public App {
 public:
  TextClassifyApp(const ConfigView& cfg, Context& ctx)
      : root_(cfg), ctx_(ctx), opts_(Options::from_config(cfg)), log_(log::get("plugin.app.text_classify")) {}

  void run(Mode mode) override {
    switch (mode) {
      case Mode::train: return train();
      case Mode::evaluate: return evaluate();
      case Mode::predict: return predict();
      case Mode::serve:
        throw UsageError("app/text_classify does not support --mode serve yet", "--mode",
                         "use train, evaluate or predict");
    }
  }

 private:
  // ------------------------------------------------------------------------------------------- helpers
  std::unique_ptr<Reader> open_reader(const std::vector<std::string>& files) {
    auto r = ctx_.create<Reader>(root_.get_string("data.reader"), root_.sub("data"));
    r->open(files);
    return r;
  }

  // The tokenizer of a model directory, or from data.vocab_file for a model trained from scratch.
  std::pair<text::Tokenizer, std::string> make_tokenizer(const std::string& model_dir) {
    text::Tokenizer tok = [&] {
      if (!model_dir.empty()) {
        if (!fs::exists(model_dir + "/vocab.txt"))
          throw DataError("model directory has no vocab.txt", model_dir, "a BERT checkpoint directory needs its vocab.txt");
        return text::Tokenizer::from_model_dir(model_dir);
      }
      if (opts_.vocab_file.empty())
        throw ConfigError("no vocabulary: set pretrain_model_name_or_path (an HF checkpoint) or data.vocab_file",
                          root_.where("data.vocab_file"));
      text::TokenizerOptions to;
      to.do_lower_case = opts_.do_lower_case;
      return text::Tokenizer::from_vocab_file(opts_.vocab_file, to);
    }();
    text::TokenizerOptions to = tok.options();
    to.max_length = opts_.sequence_length;
    to.pad_to_max_length = false;  // batches are padded dynamically
    std::string vocab = model_dir.empty() ? opts_.vocab_file : model_dir + "/vocab.txt";
    return {text::Tokenizer(tok.vocab(), to), vocab};
  }

  std::unique_ptr<Model> make_model(const std::string& model_dir, const Labels& labels, const text::Tokenizer& tok) {
    Config mc = Config::from_view(root_.sub("model"));
    const std::string src = "app/text_classify";
    mc.set_string("model_dir", model_dir, src);
    mc.set_string_list("heads", {"sequence_classification"}, src);
    mc.set_string_list("labels", labels.names, src);
    mc.set_string("problem_type", opts_.problem_name(), src);
    if (int64_t k = root_.get_int("train.activation_checkpointing"); k > 0) mc.set_int("activation_checkpointing", k, src);
    if (model_dir.empty()) {
      mc.set_int("vocab_size", static_cast<int64_t>(tok.vocab().size()), src);
      mc.set_int("pad_token_id", tok.vocab().pad_id(), src);
    }
    return ctx_.create<Model>(root_.get_string("model.name"), mc.view());
  }

  Labels training_labels(const std::vector<std::string>& train_files) {
    if (opts_.problem == Problem::regression) return Labels::from_names({"score"}, "regression");
    auto values = expand_label_values(opts_.label_values);
    if (!values.empty()) return Labels::from_names(values, "data.label_enumerate_values");
    // Discover the labels from the training rows (sorted, so the ids do not depend on row order).
    auto reader = open_reader(train_files);
    size_t col = data::column_index(reader->columns(), opts_.label_name, "data.label_name");
    std::set<std::string> seen;
    Row row;
    while (reader->next(row)) {
      if (opts_.problem == Problem::multi_label) {
        std::string cur;
        for (char c : row.values[col] + ",") {
          if (c == ',') {
            if (!cur.empty()) seen.insert(cur);
            cur.clear();
          } else if (c != ' ') {
            cur += c;
          }
        }
      } else if (!row.values[col].empty()) {
        seen.insert(row.values[col]);
      }
    }
    if (seen.empty())
      throw DataError("no labels found in the training data", train_files[0], "check data.label_name and data.tables");
    log_.info("discovered ", seen.size(), " labels from the training data (set data.label_enumerate_values to fix their order)");
    return Labels::from_names({seen.begin(), seen.end()}, train_files[0]);
  }

  data::Dataset load_set(Task& task, const std::vector<std::string>& files, const char* what) {
    auto reader = open_reader(files);
    task.bind_columns(reader->columns(), true, what);
    auto ds = data::build_dataset(*reader, [&](const Row& r, std::string& why) { return task.encode(r, why, true); });
    std::string bad = reader->bad_rows().summary();
    if (!bad.empty()) log_.warn(what, " set: ", bad);
    log_.info(what, " set: ", ds.size(), " examples from ", files.size(), " file(s)");
    if (ds.size() == 0)
      throw DataError(std::string("the ") + what + " set is empty", files[0],
                      bad.empty() ? "the file has no rows" : "every row was bad: " + bad);
    return ds;
  }

  std::string saved_model_dir() const {
    std::string dir = !opts_.pretrained.empty() ? opts_.pretrained : opts_.checkpoint_dir;
    if (dir.empty())
      throw ConfigError("no model to use: set train.checkpoint_dir (a directory written by --mode train) or "
                        "pretrain_model_name_or_path");
    if (!fs::exists(dir + "/config.json"))
      throw DataError("no saved model here (config.json missing)", dir, "train first, or point to an HF checkpoint directory");
    return dir;
  }

  void print_eval(const EvalResult& r, bool main_only) {
    if (!ctx_.world().is_main()) return;
    std::ostringstream os;
    if (opts_.problem == Problem::single_label) {
      os << "eval accuracy " << fmt(r.metrics.at("accuracy")) << " (majority-class baseline " << fmt(r.majority)
         << ", always '" << r.majority_label << "'), macro_f1 " << fmt(r.metrics.at("macro_f1")) << "\n";
      if (!main_only) os << r.report;
    } else {
      os << "eval";
      for (auto& [k, v] : r.metrics) os << " " << k << " " << fmt(v);
      os << "\n";
    }
    std::cout << os.str() << std::flush;
  }

  // --------------------------------------------------------------------------------------------- modes
  void train() {
    std::vector<std::string> train_files{opts_.tables[0]}, dev_files;
    if (opts_.tables.size() > 1) dev_files.assign(opts_.tables.begin() + 1, opts_.tables.end());
    auto [tok, vocab] = make_tokenizer(opts_.pretrained);
    Labels labels = training_labels(train_files);
    log_.info(opts_.problem_name(), " with ", labels.size(), " label(s): ", labels.list(20));
    Task task(opts_, labels, tok, vocab, nullptr, root_.to_toml());
    data::Dataset train_set = load_set(task, train_files, "training");
    data::Dataset dev_set;
    if (!dev_files.empty()) {
      dev_set = load_set(task, dev_files, "evaluation");
      task.set_eval_set(&dev_set);
    } else {
      log_.warn("no evaluation table (data.tables has one file): the last model is kept, no metrics");
    }
    auto model = make_model(opts_.pretrained, labels, tok);
    task.set_model(model.get());
    train::Trainer trainer(ctx_, root_, *model, task, train_set, task.pad_id());
    auto result = trainer.fit();
    if (!dev_files.empty()) {
      if (result.best_step >= 0) model->load(result.model_dir);  // report on the best model, the one saved
      model->module().eval();
      auto r = task.evaluate_on(dev_set, true);
      if (ctx_.world().is_main()) std::cout << "best model: step " << result.best_step << "\n";
      print_eval(r, false);
    }
    if (ctx_.world().is_main()) std::cout << "model saved to " << fs::absolute(result.model_dir).string() << std::endl;
  }

  void evaluate() {
    std::string dir = saved_model_dir();
    auto [tok, vocab] = make_tokenizer(dir);
    auto saved = read_saved_labels(dir);
    auto values = expand_label_values(opts_.label_values);
    Labels labels = Labels::from_names(!values.empty() ? values : saved, dir);
    if (labels.size() == 0) throw DataError("the saved model has no labels (label_mapping.json / id2label)", dir);
    Task task(opts_, labels, tok, vocab, nullptr, root_.to_toml());
    data::Dataset ds = load_set(task, opts_.tables, "evaluation");
    auto model = make_model(dir, labels, tok);
    model->module().eval();
    task.set_model(model.get());
    auto r = task.evaluate_on(ds, true);
    print_eval(r, false);
    std::string out = opts_.eval_results_file.empty() ? opts_.checkpoint_dir + "/eval_results.json" : opts_.eval_results_file;
    if (opts_.checkpoint_dir.empty() && opts_.eval_results_file.empty()) out = dir + "/eval_results.json";
    nlohmann::json j = nlohmann::json::object();
    for (auto& [k, v] : r.metrics) j[k] = v;
    j["examples"] = ds.size();
    if (ctx_.world().is_main()) {
      io::write_file_atomic(out, j.dump(2) + "\n");
      std::cout << "metrics written to " << out << std::endl;
    }
  }

  void predict() {
    std::string dir = saved_model_dir();
    auto [tok, vocab] = make_tokenizer(dir);
    auto saved = read_saved_labels(dir);
    auto values = expand_label_values(opts_.label_values);
    Labels labels = Labels::from_names(!values.empty() ? values : saved, dir);
    if (labels.size() == 0) throw DataError("the model has no labels (label_mapping.json / config.json id2label)", dir);
    Task task(opts_, labels, tok, vocab, nullptr, root_.to_toml());
    auto model = make_model(dir, labels, tok);
    task.set_model(model.get());
    auto reader = open_reader(opts_.tables);
    task.bind_columns(reader->columns(), false, "predict");
    std::string out = !opts_.predict_outputs.empty() ? opts_.predict_outputs
                      : !opts_.checkpoint_dir.empty() ? opts_.checkpoint_dir + "/predictions.tsv"
                                                      : "predictions.tsv";
    auto s = run_predict(task, *model, *reader, out);
    std::string bad = reader->bad_rows().summary();
    if (!bad.empty()) log_.warn("predict: ", bad);
    if (ctx_.world().is_main()) {
      std::cout << "predicted " << s.rows_written << " rows";
      if (s.bad_rows) std::cout << " (" << s.bad_rows << " bad input rows skipped, see the warnings above)";
      std::cout << " -> " << s.output << std::endl;
    }
  }

  ConfigView root_;
  Context& ctx_;
  Options opts_;
  log::Logger log_;
};

}  // namespace
}  // namespace et::apps::text_classify

ETHOST_PLUGIN(reg) {
  reg.add_app("text_classify", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::text_classify::TextClassifyApp>(cfg, ctx);
  });
}
