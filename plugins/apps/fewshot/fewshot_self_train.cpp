// fewshot_self_train.cpp: self-training for app/fewshot, iPET-style generations. Generation 0 is PET on the
// labelled rows; each later generation labels the unlabeled rows with the previous model (rows repeating a
// training, dev or excluded row dropped and counted), keeps the confident class-balanced pseudo-labels, and
// trains again from the starting model on labelled + pseudo-labelled rows. Each generation is a child app
// with a derived config; the last one trains in train.checkpoint_dir.
#include <ethost/error.h>
#include <ethost/reader.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "fewshot_app.h"
#include "row_table.h"
#include "scoring.h"
#include "self_training.h"

namespace fs = std::filesystem;

namespace et::apps::fewshot {

namespace {

// Rows as JSON lines of strings, with the columns given (the children read them with reader/jsonl).
void write_jsonl(const std::string& path, const std::vector<std::string>& names,
                 const std::vector<std::vector<std::string>>& rows) {
  std::ofstream out(path);
  if (!out) throw DataError("cannot write", path, "check that the checkpoint directory is writable");
  for (const auto& r : rows) {
    nlohmann::json j = nlohmann::json::object();
    for (size_t c = 0; c < names.size(); ++c) j[names[c]] = r[c];
    out << j.dump() << "\n";
  }
}

std::string fmt4(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

}  // namespace

// The state the generations share: the labelled, dev and unlabeled rows, the files the children read, and
// each generation's report.
struct FewshotApp::SelfTraining {
  FewshotApp& app;
  const et::app::SupervisedOptions& o;
  const ConfigView st;
  int64_t generations = 0, max_unlabeled = 0;
  SelectOptions sel;
  RowTable train, dev, pool;
  std::string unl_schema;
  std::vector<Row> unlabeled;  // distinct pool rows repeating no training, dev or excluded row
  int64_t repeat_train = 0, repeat_excluded = 0;
  // What every child reads: JSON lines of string columns (the training schema's), written under work.
  std::string work, child_schema, dev_file;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> train_values, dev_values;
  size_t label_col = 0;
  RowTable devj;  // the dev rows as the children read them, for each generation's dev accuracy
  nlohmann::json report = nlohmann::json::array();
  std::string prev_model;

  explicit SelfTraining(FewshotApp& a) : app(a), o(a.options()), st(a.root().sub("self_training")) {}

  void check_config();
  void read_rows();
  void drop_repeats(const std::vector<std::string>& text_cols);
  void prepare_children();
  std::vector<std::string> values_of(const RowTable& t, const Row& r) const;
  void pseudo_label(int64_t g, std::vector<std::vector<std::string>>& rows, nlohmann::json& gen);
  Config child_config(int64_t g, const std::string& gen_dir,
                      const std::vector<std::vector<std::string>>& rows);
  double dev_accuracy(const Config& child);
  void run_generation(int64_t g);
  void write_summary() const;
};

void FewshotApp::SelfTraining::check_config() {
  generations = st.get_int("generations");
  if (st.get_string_list("unlabeled_tables").empty())
    throw ConfigError("self-training needs unlabeled rows",
                      app.root().where("self_training.unlabeled_tables"),
                      "name the task's unlabeled file, e.g. data/fewclue/eprstmt/unlabeled.json");
  if (o.tables.size() < 2)
    throw ConfigError("self-training needs a dev set to report each generation on",
                      app.root().where("data.tables"), "give data.tables as \"train,dev\"");
  if (o.checkpoint_dir.empty())
    throw ConfigError("self-training needs train.checkpoint_dir", app.root().where("train.checkpoint_dir"));
  sel.threshold = st.get_double("threshold");
  sel.top_k = st.get_int("top_k");
  sel.balanced = st.get_bool("balanced");
  max_unlabeled = st.get_int("max_unlabeled");
}

// The labelled rows (train, dev) and the unlabeled pool.
void FewshotApp::SelfTraining::read_rows() {
  const std::vector<std::string> train_files{o.tables[0]}, dev_files(o.tables.begin() + 1, o.tables.end());
  train = read_table(app.context(), app.root(), o.reader, train_files, "", app.logger(), "training rows",
                     "data.tables");
  dev =
      read_table(app.context(), app.root(), o.reader, dev_files, "", app.logger(), "dev rows", "data.tables");
  unl_schema = st.get_string("input_schema");
  if (unl_schema.empty()) unl_schema = schema_without_label(app.root(), o.label_name);
  pool = read_table(app.context(), app.root(), o.reader, st.get_string_list("unlabeled_tables"), unl_schema,
                    app.logger(), "unlabeled rows", "self_training.unlabeled_tables");
}

// A row's texts (the pattern's columns), trimmed. An unlabeled row is dropped when any of its texts is a
// text of a training, dev or excluded row (a pair sharing one sentence with a test pair is a repeat too);
// then a seeded sample of self_training.max_unlabeled rows is kept.
void FewshotApp::SelfTraining::drop_repeats(const std::vector<std::string>& text_cols) {
  auto texts_of = [&](const RowTable& t, const Row& r) {
    std::vector<std::string> texts;
    for (const auto& c : text_cols)
      texts.push_back(text_key({r.values[data::column_index(t.columns, c, "pattern")]}));
    return texts;
  };
  std::set<std::string> labelled_texts, excluded_texts;
  auto add = [&](std::set<std::string>& into, const RowTable& t) {
    for (const auto& r : t.rows)
      for (auto& x : texts_of(t, r))
        if (!x.empty()) into.insert(std::move(x));
  };
  add(labelled_texts, train);
  add(excluded_texts, dev);
  const auto exclude_files = st.get_string_list("exclude_tables");
  if (!exclude_files.empty())
    add(excluded_texts, read_table(app.context(), app.root(), o.reader, exclude_files, unl_schema,
                                   app.logger(), "excluded rows", "self_training.exclude_tables"));
  auto any_in = [](const std::vector<std::string>& texts, const std::set<std::string>& set) {
    return std::any_of(texts.begin(), texts.end(), [&](const std::string& x) { return set.count(x) > 0; });
  };
  std::set<std::string> seen;
  for (const auto& r : pool.rows) {
    auto texts = texts_of(pool, r);
    if (any_in(texts, labelled_texts)) {
      ++repeat_train;
    } else if (any_in(texts, excluded_texts)) {
      ++repeat_excluded;
    } else if (seen.insert(text_key(texts)).second) {
      unlabeled.push_back(r);
    }
  }
  app.logger().info(
      "self-training: ", pool.rows.size(), " unlabeled rows; dropped ", repeat_train,
      " that share a text with a training row and ", repeat_excluded,
      " that share one with a dev or excluded row (data.tables dev, self_training.exclude_tables); ",
      unlabeled.size(), " distinct rows left");
  if (max_unlabeled > 0 && static_cast<int64_t>(unlabeled.size()) > max_unlabeled) {
    std::mt19937_64 rng(static_cast<uint64_t>(app.root().get_int("train.seed", 42)));
    std::shuffle(unlabeled.begin(), unlabeled.end(), rng);
    unlabeled.resize(size_t(max_unlabeled));
    app.logger().info("self-training: a seeded sample of ", max_unlabeled,
                      " of them is labelled (self_training.max_unlabeled)");
  }
}

// A row's values in the training schema's column order ("" for a column its table lacks).
std::vector<std::string> FewshotApp::SelfTraining::values_of(const RowTable& t, const Row& r) const {
  std::vector<std::string> v;
  for (const auto& n : names) {
    auto it = std::find_if(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.name == n; });
    v.push_back(it == t.columns.end() ? std::string() : r.values[size_t(it - t.columns.begin())]);
  }
  return v;
}

// Every child reads JSON lines of string columns written here: the training schema's columns.
void FewshotApp::SelfTraining::prepare_children() {
  work = (fs::path(o.checkpoint_dir) / "self_training").string();
  fs::create_directories(work);
  for (const auto& c : train.columns) {
    names.push_back(c.name);
    child_schema += (child_schema.empty() ? "" : ",") + c.name + ":str:1";
  }
  for (const auto& r : train.rows) train_values.push_back(values_of(train, r));
  for (const auto& r : dev.rows) dev_values.push_back(values_of(dev, r));
  dev_file = work + "/dev.jsonl";
  write_jsonl(dev_file, names, dev_values);
  label_col = size_t(std::find(names.begin(), names.end(), o.label_name) - names.begin());
  for (const auto& n : names) devj.columns.push_back({n, "str", 1});
  for (auto& v : dev_values) devj.rows.push_back(Row{v, dev_file, 0});
}

// Labels the pool with the previous generation's model and adds the kept pseudo-labels to rows.
void FewshotApp::SelfTraining::pseudo_label(int64_t g, std::vector<std::vector<std::string>>& rows,
                                            nlohmann::json& gen) {
  Config lc = Config::from_view(app.root());
  lc.set_string("pretrain_model_name_or_path", "", "self-training");
  lc.set_string("train.checkpoint_dir", prev_model, "self-training");
  lc.set_string("data.input_schema", unl_schema, "self-training");
  lc.set_int("self_training.generations", 0, "self-training");
  FewshotApp labeler(lc.view(), app.context());
  auto probs = labeler.label_rows(pool.columns, unlabeled);
  auto picked = select_pseudo_labels(probs, labeler.table_.labels, sel);
  std::vector<int64_t> per_class(size_t(labeler.table_.labels), 0);
  for (const auto& p : picked) {
    auto v = values_of(pool, unlabeled[size_t(p.row)]);
    v[label_col] = labeler.labels().names[size_t(p.label)];
    rows.push_back(std::move(v));
    ++per_class[size_t(p.label)];
  }
  gen["pseudo_labels"] = picked.size();
  gen["pseudo_labels_per_class"] = per_class;
  app.logger().info("self-training generation ", g, ": ", picked.size(), " pseudo-labels from ",
                    unlabeled.size(), " rows (threshold ", sel.threshold, ", top_k ", sel.top_k,
                    sel.balanced ? ", balanced" : "", ")");
  if (picked.empty())
    app.logger().warn("self-training generation ", g,
                      " keeps no pseudo-label: lower self_training.threshold");
}

// Generation g's child config: its training rows (written here), the dev file, and its checkpoint_dir.
Config FewshotApp::SelfTraining::child_config(int64_t g, const std::string& gen_dir,
                                              const std::vector<std::vector<std::string>>& rows) {
  const std::string train_file = work + "/train-generation-" + std::to_string(g) + ".jsonl";
  write_jsonl(train_file, names, rows);
  Config cc = Config::from_view(app.root());
  cc.set_string("train.checkpoint_dir", gen_dir, "self-training");
  cc.set_string_list("data.tables", {train_file, dev_file}, "self-training");
  cc.set_string("data.reader", "jsonl", "self-training");
  cc.set_string("data.input_schema", child_schema, "self-training");
  cc.set_bool("data.skip_first_line", false, "self-training");
  cc.erase("data.delimiter");
  cc.erase("data.quote");
  cc.set_int("self_training.generations", 0, "self-training");
  return cc;
}

// The generation's dev accuracy, with the model it saved.
double FewshotApp::SelfTraining::dev_accuracy(const Config& child) {
  Config ec = Config::from_view(child.view());
  ec.set_string("pretrain_model_name_or_path", "", "self-training");
  FewshotApp judge(ec.view(), app.context());
  auto probs = judge.label_rows(devj.columns, devj.rows);
  int64_t right = 0;
  const int64_t L = judge.table_.labels;
  for (size_t r = 0; r < devj.rows.size(); ++r) {
    const float* p = probs.data() + int64_t(r) * L;
    right += judge.labels().names[size_t(std::max_element(p, p + L) - p)] == dev_values[r][label_col];
  }
  return devj.rows.empty() ? 0.0 : double(right) / double(devj.rows.size());
}

// Generation 0 is PET on the labelled rows; a later one adds the previous model's pseudo-labels. The last
// trains in train.checkpoint_dir.
void FewshotApp::SelfTraining::run_generation(int64_t g) {
  const bool last = g == generations;
  const std::string gen_dir =
      last ? o.checkpoint_dir : (fs::path(work) / ("generation-" + std::to_string(g))).string();
  auto rows = train_values;
  nlohmann::json gen{{"generation", g}, {"checkpoint_dir", gen_dir}};
  if (g > 0) pseudo_label(g, rows, gen);
  Config cc = child_config(g, gen_dir, rows);
  {
    FewshotApp child(cc.view(), app.context());
    child.SupervisedApp::run(Mode::train);
  }
  const double acc = dev_accuracy(cc);
  gen["dev_accuracy"] = acc;
  gen["training_rows"] = rows.size();
  report.push_back(gen);
  app.logger().info("self-training generation ", g, ": dev accuracy ", fmt4(acc), " (", rows.size(),
                    " training rows)");
  prev_model = gen_dir;
}

void FewshotApp::SelfTraining::write_summary() const {
  nlohmann::json summary{{"generations", report},
                         {"unlabeled_rows", pool.rows.size()},
                         {"dropped_repeating_training", repeat_train},
                         {"dropped_repeating_dev_or_excluded", repeat_excluded}};
  std::ofstream(fs::path(o.checkpoint_dir) / "self_training.json") << summary.dump(2) << "\n";
  std::cout << "self-training (dev accuracy per generation):";
  for (const auto& gen : report) std::cout << " " << gen["generation"] << ": " << fmt4(gen["dev_accuracy"]);
  std::cout << "\n";
}

void FewshotApp::self_train() {
  SelfTraining s(*this);
  s.check_config();
  s.read_rows();
  s.drop_repeats(pattern_.columns());
  s.prepare_children();
  for (int64_t g = 0; g <= s.generations; ++g) s.run_generation(g);
  s.write_summary();
}

std::vector<float> FewshotApp::label_rows(const std::vector<data::Column>& columns,
                                          const std::vector<Row>& rows) {
  auto* p = et::query<Predictor>(*this);
  ET_CHECK(p != nullptr, "app/fewshot offers no Predictor");
  p->prepare_predict();
  p->bind_columns(columns);
  std::vector<data::Example> examples;
  std::vector<size_t> kept;
  std::string why;
  for (size_t i = 0; i < rows.size(); ++i)
    if (auto e = p->encode(rows[i], why)) {
      examples.push_back(std::move(*e));
      kept.push_back(i);
    }
  std::vector<float> probs(rows.size() * size_t(table_.labels), 0.0f);
  const size_t bs = size_t(std::max<int64_t>(1, options().eval_batch_size));
  for (size_t s = 0; s < examples.size(); s += bs) {
    std::vector<const data::Example*> ptrs;
    for (size_t i = s; i < std::min(examples.size(), s + bs); ++i) ptrs.push_back(&examples[i]);
    auto batch = p->collate(ptrs);
    auto out_t = p->predict_batch(batch);
    auto pr = label_probabilities(scores(out_t, batch.tensors), pooling_).contiguous();
    const float* d = pr.data_ptr<float>();
    for (size_t i = 0; i < ptrs.size(); ++i)
      std::copy(d + i * size_t(table_.labels), d + (i + 1) * size_t(table_.labels),
                probs.begin() + std::ptrdiff_t(kept[s + i] * size_t(table_.labels)));
  }
  return probs;
}

}  // namespace et::apps::fewshot
