// supervised_app.cpp: train / evaluate / predict of the supervised-app base — tokenizer, labels, datasets,
// the model to create, the trainer, eval_results.json, model directories — and its Predictor.
#include "ethost/app/supervised_app.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "distill.h"
#include "ethost/app/model_files.h"
#include "ethost/app/predict_driver.h"
#include "ethost/data/batcher.h"
#include "ethost/error.h"
#include "ethost/io/state_dict.h"
#include "ethost/nn/quantize.h"
#include "ethost/nn/transformer_config.h"
#include "ethost/services.h"
#include "nn/packed_encoder.h"

namespace fs = std::filesystem;

namespace et::app {

const std::vector<ConfigKeySpec>& supervised_config_specs() {
  static const std::vector<ConfigKeySpec> specs = {
      service_key("data.reader", "component", "\"tsv\"", "reader plugin for data.tables (tsv, jsonl)", {}, {},
                  {}, "reader"),
      service_key(
          "data.tables", "path_list", "[]",
          "input files: train mode 'train[,dev]'; evaluate: the labelled files; predict: the files to label "
          "(serve reads none)"),
      service_key(
          "data.sequence_length", "int", "128",
          "maximum tokens per example, [CLS]/[SEP] included (longer texts are truncated longest_first)", 8.0),
      service_key("data.vocab_file", "path", "\"\"",
                  "vocab.txt for a model trained from scratch (pretrained and saved models bring their own)"),
      service_key("data.do_lower_case", "bool", "true",
                  "lower-case and strip accents (with data.vocab_file; model directories use their "
                  "tokenizer_config.json)"),
      service_key("data.label_name", "string", "\"label\"", "column holding the label"),
      service_key(
          "data.label_enumerate_values", "list_or_file", "[]",
          "the labels in id order, or one path to a file with one label per line; empty: discovered from "
          "the training data (sorted)"),
      service_key("model.name", "component", "\"bert\"", "model plugin", {}, {}, {}, "model"),
      service_key("optimizer.name", "component", "\"adamw\"", "optimizer plugin", {}, {}, {}, "optimizer"),
      service_key(
          "pretrain_model_name_or_path", "path", "\"\"",
          "HF checkpoint directory to fine-tune from (empty: train from scratch with the [model] sizes and "
          "data.vocab_file)"),
      service_key("eval.batch_size", "int", "64", "examples per forward pass when evaluating", 1.0),
      service_key(
          "eval.results_file", "path", "\"\"",
          "where evaluate mode writes its metrics as JSON (default <checkpoint_dir>/eval_results.json)"),
  };
  static const std::vector<ConfigKeySpec> all = [] {
    auto v = specs;
    const auto& d = distill_config_specs();
    v.insert(v.end(), d.begin(), d.end());
    return v;
  }();
  return all;
}

SupervisedOptions SupervisedOptions::from_config(const ConfigView& c) {
  SupervisedOptions o;
  o.tables = c.get_string_list("data.tables");  // checked by the modes that read files (serve reads none)
  o.reader = c.get_string("data.reader");
  o.sequence_length = c.get_int("data.sequence_length");
  o.vocab_file = c.get_string("data.vocab_file");
  o.do_lower_case = c.get_bool("data.do_lower_case");
  o.label_name = c.get_string("data.label_name");
  o.label_values = c.get_string_list("data.label_enumerate_values");
  o.pretrained = c.get_string("pretrain_model_name_or_path");
  o.checkpoint_dir = c.get_string("train.checkpoint_dir");
  o.model_name = c.get_string("model.name");
  o.eval_batch_size = c.get_int("eval.batch_size");
  o.eval_results_file = c.get_string("eval.results_file");
  return o;
}

// The Predictor is the base's inner object: its calls go to the app's hooks.
struct SupervisedApp::Impl final : public Predictor {
  SupervisedApp& app;
  ConfigView root;
  Context& ctx;
  std::string name;
  SupervisedOptions o;
  log::Logger log;
  std::optional<text::Tokenizer> tok;
  Labels labels;
  std::unique_ptr<Model> model;
  data::FeatureSchema schema;
  data::Dataset dev;
  const data::Dataset* train_set = nullptr;  // while train mode runs
  WindowEncodeFn windows;                    // set: rows make several examples

  Impl(SupervisedApp& a, const ConfigView& r, Context& c, std::string n)
      : app(a),
        root(r),
        ctx(c),
        name(std::move(n)),
        o(SupervisedOptions::from_config(r)),
        log(log::get("plugin.app." + name)) {}

  // ------------------------------------------------------------------------------------------- set-up
  // The tokenizer of a model directory, or from data.vocab_file for a model trained from scratch.
  void setup_tokenizer(const std::string& model_dir) {
    tok.emplace(app_tokenizer(model_dir, o.vocab_file, o.do_lower_case, o.sequence_length,
                              root.where("data.vocab_file")));
    schema = app.features();
  }

  std::unique_ptr<Reader> open_reader(const std::vector<std::string>& files) {
    auto r = ctx.create<Reader>(o.reader, root.sub("data"));
    r->open(files);
    return r;
  }

  void training_labels(const std::vector<std::string>& train_files) {
    if (!app.has_label_set()) return;
    if (auto fixed = app.fixed_labels(); !fixed.empty()) {
      labels = Labels::from_names(fixed, "app/" + name);
      return;
    }
    auto values = expand_label_values(o.label_values);
    if (!values.empty()) {
      labels = Labels::from_names(values, "data.label_enumerate_values");
      return;
    }
    // Discover the labels from the training rows (sorted, so the ids do not depend on row order).
    auto reader = open_reader(train_files);
    size_t col = data::column_index(reader->columns(), o.label_name, "data.label_name");
    std::set<std::string> seen;
    Row row;
    while (reader->next(row))
      for (auto& l : app.labels_in_cell(row.values[col]))
        if (!l.empty()) seen.insert(l);
    if (seen.empty())
      throw DataError("no labels found in the training data", train_files[0],
                      "check data.label_name and data.tables");
    log.info("discovered ", seen.size(),
             " labels from the training data (set data.label_enumerate_values to fix their order)");
    labels = Labels::from_names({seen.begin(), seen.end()}, train_files[0]);
  }

  // The labels of a saved model (or the configured ones).
  void saved_labels(const std::string& dir) {
    if (!app.has_label_set()) return;
    auto values = expand_label_values(o.label_values);
    if (values.empty()) values = app.fixed_labels();
    labels = Labels::from_names(!values.empty() ? values : read_saved_labels(dir), dir);
    if (labels.size() == 0)
      throw DataError("the saved model has no labels (label_mapping.json / config.json id2label)", dir);
  }

  // Adds what distillation reads from a row to its example (the teacher's logits); false + reason: a bad row.
  using DecorateFn = std::function<bool(const Row&, data::Example&, std::string&)>;

  data::Dataset load_set(const std::vector<std::string>& files, const char* what) {
    return load_set(open_reader(files), files, what, true, schema, nullptr);
  }
  data::Dataset load_set(std::unique_ptr<Reader> reader, const std::vector<std::string>& files,
                         const char* what, bool with_label, const data::FeatureSchema& s,
                         const DecorateFn& decorate) {
    app.bind_columns(reader->columns(), with_label, what);
    if (decorate && windows)
      throw ConfigError(
          "app/" + name + " makes several examples of a row: distillation does not support it yet",
          root.where("distill.enable_distillation"));
    auto one = [&](const Row& r, std::string& why) -> std::optional<data::Example> {
      auto ex = app.encode(r, why, with_label);
      if (ex && decorate && !decorate(r, *ex, why)) return std::nullopt;
      return ex;
    };
    auto ds =
        windows ? data::build_windowed_dataset(
                      *reader, [&](const Row& r, std::string& why) { return windows(r, why, with_label); }, s)
                : data::build_dataset(*reader, one, s);
    std::string bad = reader->bad_rows().summary();
    if (!bad.empty()) log.warn(what, " set: ", bad);
    log.info(what, " set: ", ds.size(), windows ? " windows from " : " examples from ", files.size(),
             " file(s)");
    if (ds.size() == 0)
      throw DataError(std::string("the ") + what + " set is empty", files[0],
                      bad.empty() ? "the file has no rows" : "every row was bad: " + bad);
    return ds;
  }

  std::string saved_model_dir() const {
    std::string dir = et::app::saved_model_dir(app.saved_model_dir(), "");
    // A training config names the model it started from: evaluating that one instead of the model it trained
    // is an easy mistake, so say which is used (the rule is pretrain_model_name_or_path first).
    if (dir == o.pretrained && !o.checkpoint_dir.empty() && fs::exists(o.checkpoint_dir + "/config.json") &&
        fs::weakly_canonical(o.checkpoint_dir) != fs::weakly_canonical(o.pretrained))
      log.warn("using pretrain_model_name_or_path ", o.pretrained,
               ", not the model trained in train.checkpoint_dir ", o.checkpoint_dir,
               ": set pretrain_model_name_or_path = \"\" to evaluate or predict with the trained one");
    return dir;
  }

  // The model of model_dir (empty: from scratch with the [model] sizes), its config changed by `adjust`.
  std::unique_ptr<Model> build_model(const std::string& model_dir,
                                     const std::function<void(Config&)>& adjust = nullptr) {
    Config mc = Config::from_view(root.sub("model"));
    const std::string src = "app/" + name;
    mc.set_string("model_dir", model_dir, src);
    if (app.has_label_set()) mc.set_string_list("labels", labels.names, src);
    // Checked against max_position_embeddings when the model is built (a config error naming both keys).
    const std::string seq_where = root.where("data.sequence_length");
    mc.set_int("sequence_length", o.sequence_length,
               "data.sequence_length" + (seq_where.empty() ? std::string() : " (" + seq_where + ")"));
    if (int64_t k = root.get_int("train.activation_checkpointing", 0); k > 0)
      mc.set_int("activation_checkpointing", k, src);
    if (model_dir.empty()) {
      mc.set_int("vocab_size", static_cast<int64_t>(tok->vocab().size()), src);
      mc.set_int("pad_token_id", tok->vocab().pad_id(), src);
    }
    app.configure_model(mc);
    if (adjust) adjust(mc);
    return ctx.create<Model>(o.model_name, mc.view());
  }
  void make_model(const std::string& model_dir) { model = build_model(model_dir); }

  void print(const std::string& text) const {
    if (ctx.world().is_main() && !text.empty()) std::cout << text << std::flush;
  }

  // ------------------------------------------------------------------------------------------- modes
  void train() {
    input_tables(root);
    std::vector<std::string> train_files{o.tables[0]}, dev_files(o.tables.begin() + 1, o.tables.end());
    const DistillOptions d = DistillOptions::from_config(root);
    // A student built from the teacher, or one without a tokenizer of its own, reads with the teacher's.
    std::string tok_dir = o.pretrained;
    if (d.enabled && !d.teacher.empty() &&
        (d.student_layers > 0 || (tok_dir.empty() && o.vocab_file.empty())))
      tok_dir = d.teacher;
    if (d.student_layers > 0 && !o.pretrained.empty())
      throw ConfigError(
          "distill.student_layers builds the student from the teacher, but pretrain_model_name_or_path "
          "is set too",
          root.where("distill.student_layers"),
          "set pretrain_model_name_or_path = \"\", or distill.student_layers = 0 to fine-tune it");
    setup_tokenizer(tok_dir);
    if (d.teacher_in_process()) same_vocab_as_teacher(tok_dir, d.teacher);
    training_labels(train_files);
    if (d.enabled && !d.teacher.empty() && app.has_label_set()) {
      auto tl = read_saved_labels(d.teacher);
      if (!tl.empty() && tl != labels.names)
        throw ConfigError("the teacher's labels (" + Labels::from_names(tl, d.teacher).list(20) +
                              ") are not the student's (" + labels.list(20) + ")",
                          d.teacher, "set data.label_enumerate_values to the teacher's labels in its order");
    }
    if (app.has_label_set())
      log.info(app.describe_task(), " with ", labels.size(), " label(s): ", labels.list(20));
    if (const auto* ls = schema.find("labels"); d.enabled && ls && ls->dtype == data::DType::float32)
      throw ConfigError(
          "distillation needs label ids (single-label classification, matching, tagging); this task's "
          "labels are numbers (multi-label or regression)",
          root.where("distill.enable_distillation"));
    data::FeatureSchema train_schema = schema;
    if (d.enabled && !d.logits_column.empty()) train_schema.tensor("teacher_logits");
    auto reader = open_reader(train_files);
    auto decorate = logits_decorator(d, *reader);
    data::Dataset train_examples =
        load_set(std::move(reader), train_files, "training", true, train_schema, decorate);
    if (d.enabled && !d.transfer_tables.empty()) add_transfer_set(d, train_schema, train_examples);
    train_set = &train_examples;
    struct Expose {  // training_set() sees the examples while this mode runs, not after
      const data::Dataset*& slot;
      ~Expose() { slot = nullptr; }
    } expose{train_set};
    if (!dev_files.empty())
      dev = load_set(dev_files, "evaluation");
    else
      log.warn("no evaluation table (data.tables has one file): the last model is kept, no metrics");

    std::unique_ptr<Model> teacher;
    if (d.enabled && !d.teacher.empty()) {
      teacher = build_model(d.teacher, [&](Config& mc) { distill_outputs(d, mc); });
      teacher->module().eval();
      for (auto& p : teacher->module().parameters()) p.set_requires_grad(false);
    }
    if (!d.enabled)
      make_model(o.pretrained);
    else
      model = build_model(d.student_layers > 0 ? std::string() : o.pretrained, [&](Config& mc) {
        if (d.student_layers > 0) teacher_architecture(d, mc);
        distill_outputs(d, mc);
      });
    if (d.student_layers > 0) {
      auto from =
          init_layer_choice(d.student_init, d.student_layers, encoder_shape(teacher->module()).layers);
      int64_t n = init_student_from_teacher(model->module(), teacher->module(), from);
      std::string list;
      for (auto f : from) list += (list.empty() ? "" : ", ") + std::to_string(f);
      log.info("student: ", d.student_layers, " layer(s) initialised from teacher layer(s) ", list, " (",
               d.student_init, ", ", n, " tensors copied)");
    }
    if (teacher && !d.teacher_in_process()) teacher.reset();  // it served the initialisation only
    std::unique_ptr<DistillTask> distill;
    if (d.enabled) {
      distill = std::make_unique<DistillTask>(app, *model, teacher.get(), d, log);
      log.info("distillation: ", d.type, ", temperature ", d.temperature, ", alpha ", d.alpha,
               ", teacher logits ",
               d.logits_column.empty() ? "computed in-process from " + d.teacher
                                       : "read from column '" + d.logits_column + "'");
    }
    train::TrainTask& task = distill ? static_cast<train::TrainTask&>(*distill) : app;
    train::Trainer trainer(ctx, root, *model, task, train_examples);
    if (distill && teacher) trainer.add_forward_hook(*distill);
    auto result = trainer.fit();
    if (distill) distill->remove_projections();
    teacher.reset();
    if (!dev_files.empty()) {
      if (result.best_step >= 0) model->load(result.model_dir);  // report on the best model, the one saved
      model->module().eval();
      auto r = app.evaluate_on(dev);
      print("best model: step " + std::to_string(result.best_step) + "\n");
      print(r.text);
    }
    print("model saved to " + fs::absolute(result.model_dir).string() + "\n");
  }

  // ------------------------------------------------------------------------------------------- distillation
  // The teacher's logits from distill.logits_column as the example's "teacher_logits" (null: not configured).
  DecorateFn logits_decorator(const DistillOptions& d, const Reader& reader) const {
    if (!d.enabled || d.logits_column.empty()) return nullptr;
    size_t col = data::column_index(reader.columns(), d.logits_column, "distill.logits_column");
    const int64_t n = app.has_label_set() ? static_cast<int64_t>(labels.size()) : -1;
    return [col, n, name = d.logits_column](const Row& row, data::Example& ex, std::string& why) {
      std::string cell = row.values[col];
      for (char& c : cell)
        if (c == '[' || c == ']' || c == ',') c = ' ';
      std::vector<float> v;
      const char* p = cell.c_str();
      char* end = nullptr;
      for (double x = std::strtod(p, &end); end != p; x = std::strtod(p, &end)) {
        v.push_back(static_cast<float>(x));
        p = end;
      }
      while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
      if (*p != '\0' || v.empty() || (n > 0 && static_cast<int64_t>(v.size()) != n)) {
        why = "column '" + name + "' (distill.logits_column) must hold " +
              (n > 0 ? std::to_string(n) : std::string("the")) + " teacher logits, got '" +
              row.values[col].substr(0, 80) + "'";
        return false;
      }
      auto len = static_cast<int64_t>(v.size());
      ex.set("teacher_logits", data::Feature::tensor(std::move(v), {len}));
      return true;
    };
  }

  // distill.transfer_tables: unlabeled rows (labels -100) that train on the KD term only.
  void add_transfer_set(const DistillOptions& d, const data::FeatureSchema& s,
                        data::Dataset& train_examples) {
    const auto* ls = s.find("labels");
    if (!ls || ls->dtype != data::DType::int64 || ls->pad != data::Pad::none)
      throw ConfigError("distill.transfer_tables needs a task with one label id per example",
                        root.where("distill.transfer_tables"),
                        "app/" + name + " labels differently: leave distill.transfer_tables empty");
    Config rc = Config::from_view(root.sub("data"));
    if (!d.transfer_input_schema.empty())
      rc.set_string("input_schema", d.transfer_input_schema, "distill.transfer_input_schema");
    auto reader = ctx.create<Reader>(o.reader, rc.view());
    reader->open(d.transfer_tables);
    auto teacher_logits = logits_decorator(d, *reader);
    DecorateFn unlabeled = [teacher_logits](const Row& row, data::Example& ex, std::string& why) {
      ex.set("labels", data::Feature::scalar<int64_t>(-100));
      return !teacher_logits || teacher_logits(row, ex, why);
    };
    auto t = load_set(std::move(reader), d.transfer_tables, "transfer", false, s, unlabeled);
    for (auto& e : t.examples) train_examples.examples.push_back(std::move(e));
    log.info("training set with the transfer set: ", train_examples.size(), " examples");
  }

  // The student and the teacher return their hidden states (and attention maps) for intermediate_kd.
  static void distill_outputs(const DistillOptions& d, Config& mc) {
    if (!d.intermediate()) return;
    mc.set_bool("output_hidden_states", true, "distill.type");
    if (d.attention_weight > 0) mc.set_bool("output_attentions", true, "distill.attention_weight");
  }

  // distill.student_layers: the teacher's sizes with fewer layers.
  static void teacher_architecture(const DistillOptions& d, Config& mc) {
    auto a = nn::read_hf_config(d.teacher + "/config.json");
    const std::string src = "distill.student_layers (the teacher's config.json)";
    mc.set_string("model_type", a.model_type, src);
    mc.set_int("hidden_size", a.hidden_size, src);
    mc.set_int("num_hidden_layers", d.student_layers, src);
    mc.set_int("num_attention_heads", a.num_attention_heads, src);
    mc.set_int("intermediate_size", a.intermediate_size, src);
    mc.set_string("hidden_act", a.hidden_act, src);
    mc.set_int("max_position_embeddings", a.max_position_embeddings, src);
    mc.set_int("type_vocab_size", a.type_vocab_size, src);
    mc.set_double("layer_norm_eps", a.layer_norm_eps, src);
  }

  // An in-process teacher reads the student's token ids: both must use one vocabulary.
  void same_vocab_as_teacher(const std::string& tok_dir, const std::string& teacher) const {
    if (tok_dir == teacher) return;
    const std::string mine = tok_dir.empty() ? o.vocab_file : tok_dir + "/vocab.txt";
    auto read = [](const std::string& f) {
      std::ifstream in(f, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    if (fs::exists(mine) && fs::exists(teacher + "/vocab.txt") && read(mine) != read(teacher + "/vocab.txt"))
      throw ConfigError(
          "the student's vocabulary " + mine + " is not the teacher's " + teacher + "/vocab.txt",
          root.where("distill.teacher"),
          "an in-process teacher reads the student's token ids: use one vocabulary (leave "
          "data.vocab_file empty to take the teacher's), or give the logits in distill.logits_column");
  }

  void evaluate() {
    std::string dir = saved_model_dir();
    setup_tokenizer(dir);
    saved_labels(dir);
    input_tables(root);
    data::Dataset ds = load_set(o.tables, "evaluation");
    make_model(dir);
    model->module().eval();
    auto r = app.evaluate_on(ds);
    print(r.text);
    std::string out = !o.eval_results_file.empty() ? o.eval_results_file
                      : !o.checkpoint_dir.empty()  ? o.checkpoint_dir + "/eval_results.json"
                                                   : dir + "/eval_results.json";
    nlohmann::json j = nlohmann::json::object();
    std::string line;
    for (auto& [k, v] : r.metrics) {
      j[k] = v;
      line += (line.empty() ? "" : ", ") + k + " " + std::to_string(v);
    }
    j["examples"] = ds.size();
    if (ctx.world().is_main()) {
      io::write_file_atomic(out, j.dump(2) + "\n");
      log.info("evaluation on ", ds.size(), " examples: ", line);
      std::cout << "metrics written to " << out << std::endl;
    }
  }

  void save(const std::string& dir) {
    model->save(dir);
    tok->save(dir);
    if (app.has_label_set()) write_label_mapping(dir, labels);
    io::write_file_atomic(dir + "/train_config.toml", root.to_toml() + "\n");
    app.save_extra(dir);
  }

  // ------------------------------------------------------------------------------------------- Predictor
  void prepare_predict() override {
    std::string dir = saved_model_dir();
    setup_tokenizer(dir);
    saved_labels(dir);
    make_model(dir);
    model->module().eval();
    if (root.get_string("predict.quantize", "none") == "int8") {
      int64_t n = nn::quantize_encoder_int8(model->module());
      log.info("int8: ", n, " encoder Linear layers quantized (dynamic, onednn)");
    }
    if (root.get_bool("predict.packed_inference", false)) {
      int64_t n = nn::detail::enable_packed_inference(model->module());
      log.info("packed inference: ", n, " encoder(s) run on real tokens only");
    }
  }
  std::vector<std::string> input_columns() const override { return app.input_columns(); }
  std::vector<OutputColumn> output_columns() const override { return app.output_columns(); }
  void bind_columns(const std::vector<data::Column>& columns) override {
    app.bind_columns(columns, false, "predict");
  }
  std::optional<data::Example> encode(const Row& row, std::string& reason) const override {
    if (!windows) return app.encode(row, reason, false);
    auto w = windows(row, reason, false);
    if (w.empty()) return std::nullopt;
    return data::pack_windows(std::move(w));
  }
  data::Batch collate(const std::vector<const data::Example*>& examples) const override {
    if (!windows) return data::collate_examples(schema, examples);
    std::vector<data::Example> all;
    for (const auto* e : examples)
      for (auto& w : data::unpack_windows(*e)) all.push_back(std::move(w));
    std::vector<const data::Example*> ptrs;
    for (const auto& w : all) ptrs.push_back(&w);
    return data::collate_examples(schema, ptrs);
  }
  TensorMap predict_batch(const data::Batch& batch) override {
    torch::NoGradGuard no_grad;
    return model->forward(app.model_inputs(batch));
  }
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override {
    app.postprocess(outputs, batch, items, columns, cells);
  }
};

SupervisedApp::SupervisedApp(const ConfigView& root, Context& ctx, std::string app_name)
    : impl_(std::make_unique<Impl>(*this, root, ctx, std::move(app_name))) {}
SupervisedApp::~SupervisedApp() = default;

void SupervisedApp::run(Mode mode) {
  switch (mode) {
    case Mode::train:
      return impl_->train();
    case Mode::evaluate:
      return impl_->evaluate();
    case Mode::predict:
      run_predict(impl_->ctx, *impl_, impl_->root);
      return;
    case Mode::serve:
      throw UsageError("app/" + impl_->name + " does not support --mode serve yet", "--mode",
                       "use train, evaluate or predict");
  }
}

void* SupervisedApp::query_interface(std::string_view id) {
  if (id == Predictor::kInterfaceId) return static_cast<Predictor*>(impl_.get());
  return App::query_interface(id);
}

data::FeatureSchema SupervisedApp::features() const {
  auto s = data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
  s.scalar("labels");
  return s;
}
void SupervisedApp::configure_model(Config&) const {}
std::vector<std::string> SupervisedApp::labels_in_cell(const std::string& cell) const { return {cell}; }
std::string SupervisedApp::describe_task() const { return impl_->name; }
void SupervisedApp::save_extra(const std::string&) const {}

void SupervisedApp::set_window_encoder(WindowEncodeFn encode) { impl_->windows = std::move(encode); }

const SupervisedOptions& SupervisedApp::options() const { return impl_->o; }
const ConfigView& SupervisedApp::root() const { return impl_->root; }
Context& SupervisedApp::context() { return impl_->ctx; }
const log::Logger& SupervisedApp::logger() const { return impl_->log; }
const Labels& SupervisedApp::labels() const { return impl_->labels; }
const data::Dataset* SupervisedApp::training_set() const { return impl_->train_set; }
std::string SupervisedApp::saved_model_dir() const {
  return !impl_->o.pretrained.empty() ? impl_->o.pretrained : impl_->o.checkpoint_dir;
}

const text::Tokenizer& SupervisedApp::tokenizer() const {
  if (!impl_->tok) throw InternalError("SupervisedApp::tokenizer() before a mode set it up");
  return *impl_->tok;
}

Model& SupervisedApp::model() {
  if (!impl_->model) throw InternalError("SupervisedApp::model() before a mode created it");
  return *impl_->model;
}

std::unique_ptr<Reader> SupervisedApp::open_reader(const std::vector<std::string>& files) {
  return impl_->open_reader(files);
}

std::map<std::string, at::Tensor> SupervisedApp::forward_dataset(const data::Dataset& ds,
                                                                 const std::vector<std::string>& names) {
  torch::NoGradGuard no_grad;
  std::map<std::string, std::vector<at::Tensor>> parts;
  std::map<std::string, double> scalar_sums;
  int64_t n = 0;
  const auto bs = static_cast<size_t>(impl_->o.eval_batch_size);
  for (size_t start = 0; start < ds.examples.size(); start += bs) {
    std::vector<int64_t> idx;
    for (size_t i = start; i < std::min(ds.examples.size(), start + bs); ++i)
      idx.push_back(static_cast<int64_t>(i));
    data::Batch b = data::make_batch(ds, idx);
    TensorMap out = model().forward(model_inputs(b));
    for (const auto& name : names) {
      auto it = out.find(name);
      if (it == out.end()) continue;
      at::Tensor t = it->second.is_floating_point() ? it->second.to(torch::kFloat) : it->second;
      if (t.dim() == 0)
        scalar_sums[name] += t.item<double>() * static_cast<double>(b.size);  // e.g. the loss
      else
        parts[name].push_back(t);
    }
    n += b.size;
  }
  std::map<std::string, at::Tensor> result;
  for (auto& [name, ts] : parts) {
    // Per-token outputs ([B, T, ...]) of batches padded to different lengths: pad dim 1 to the longest.
    int64_t longest = 0;
    for (auto& t : ts) longest = t.dim() >= 2 ? std::max(longest, t.size(1)) : longest;
    for (auto& t : ts)
      if (t.dim() >= 2 && t.size(1) < longest) {
        std::vector<int64_t> pad(size_t(2 * (t.dim() - 1)), 0);  // (last dim ... dim 1), before/after each
        pad.back() = longest - t.size(1);
        t = torch::constant_pad_nd(t, pad, 0);
      }
    result[name] = torch::cat(ts).contiguous();
  }
  for (auto& [name, s] : scalar_sums)
    result[name] = torch::tensor(s / static_cast<double>(std::max<int64_t>(1, n)));
  return result;
}

std::map<std::string, double> SupervisedApp::evaluate() {
  if (impl_->dev.size() == 0) return {};
  return evaluate_on(impl_->dev).metrics;
}

void SupervisedApp::save_model(const std::string& dir) { impl_->save(dir); }

}  // namespace et::app
