// trainer_test.cpp: the trainer in process, on a two-parameter model (y = w x + b) and a fake context (no
// plugins, no processes): a three-loss model's terms reach metrics.jsonl, TensorBoard and observers with
// their hand-computed values; a distillation-style forward hook runs without autograd on every micro-step and
// its outputs drive the loss; trainer keys have one default each.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "ethost/context.h"
#include "ethost/data/batcher.h"
#include "ethost/data/dataset.h"
#include "ethost/error.h"
#include "ethost/train/trainer.h"
#include "fake_context.h"
#include "process.h"
#include "tensor_json.h"

using namespace et;

namespace {

// Plain SGD: p -= lr * grad (base learning rate 0.5).
class Sgd final : public Optimizer {
 public:
  explicit Sgd(std::vector<at::Tensor> p) : params_(std::move(p)) {}
  void step() override {
    torch::NoGradGuard ng;
    for (auto& p : params_)
      if (p.grad().defined()) p.add_(p.grad(), -lr_);
  }
  void zero_grad() override {
    for (auto& p : params_)
      if (p.grad().defined()) p.mutable_grad().zero_();
  }
  void set_lr(double lr) override { lr_ = lr; }
  double lr() const override { return 0.5; }
  std::map<std::string, at::Tensor> state() const override { return {}; }
  void load_state(const std::map<std::string, at::Tensor>&) override {}
  std::string describe() const override { return "sgd"; }

 private:
  std::vector<at::Tensor> params_;
  double lr_ = 0.5;
};

class SgdFactory final : public OptimizerFactory {
 public:
  std::unique_ptr<Optimizer> make(std::vector<ParamGroup> groups) override {
    std::vector<at::Tensor> p;
    for (auto& g : groups) p.insert(p.end(), g.params.begin(), g.params.end());
    return std::make_unique<Sgd>(std::move(p));
  }
};

// A context with one process and an "sgd" optimizer; nothing else can be created.
std::unique_ptr<et::test::FakeContext> sgd_context() {
  auto ctx = std::make_unique<et::test::FakeContext>();
  ctx->add_optimizer("sgd", [](const ConfigView&) { return std::make_unique<SgdFactory>(); });
  return ctx;
}

// The two-parameter model: y = w x + b on scalar inputs.
struct LineImpl : torch::nn::Module {
  LineImpl(float w0, float b0) {
    w = register_parameter("w", torch::full({1}, w0));
    b = register_parameter("b", torch::full({1}, b0));
  }
  at::Tensor forward(const at::Tensor& x) { return w * x + b; }
  at::Tensor w, b;
};

// Wraps a module as an et::Model whose forward is a function.
class FnModel final : public Model {
 public:
  FnModel(std::shared_ptr<torch::nn::Module> m, std::function<TensorMap(const TensorMap&)> f)
      : m_(std::move(m)), f_(std::move(f)) {}
  TensorMap forward(const TensorMap& in) override { return f_(in); }
  torch::nn::Module& module() override { return *m_; }
  void save(const std::string&) const override {}
  void load(const std::string&) override {}

 private:
  std::shared_ptr<torch::nn::Module> m_;
  std::function<TensorMap(const TensorMap&)> f_;
};

class Task final : public train::TrainTask {
 public:
  std::function<train::LossTerms(const TensorMap&, const TensorMap&)> loss_fn;
  train::LossTerms loss(const TensorMap& out, const data::Batch& b, const TensorMap& extras) override {
    return loss_fn ? loss_fn(out, extras) : TrainTask::loss(out, b, extras);
  }
  std::map<std::string, double> evaluate() override { return {}; }
  std::pair<std::string, bool> main_metric() const override { return {"loss", false}; }
  void save_model(const std::string&) override {}
};

// n examples: "x" a float scalar (seeded uniform in [-1, 1]), "y" = 2 x - 1.
data::Dataset make_data(int n) {
  data::Dataset ds;
  ds.schema.scalar("x", data::DType::float32).scalar("y", data::DType::float32);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < n; ++i) {
    const float x = u(rng);
    data::Example e;
    e.set("x", data::Feature::scalar(x));
    e.set("y", data::Feature::scalar(2 * x - 1));
    e.index = i;
    ds.examples.push_back(std::move(e));
  }
  return ds;
}

Config train_config(const std::string& dir, const std::string& extra = {}) {
  return Config::from_string(
      "[optimizer]\nname = \"sgd\"\n[train]\ncheckpoint_dir = \"" + dir +
          "\"\nmicro_batch_size = 8\nshuffle = false\nlogging_steps = 1\nloss_window = 1\n"
          "warmup_steps = 0\nlr_schedule = \"constant\"\nprogress_bar = \"never\"\n" +
          extra,
      "trainer_test");
}

struct Recorder final : train::TrainObserver {
  std::vector<std::map<std::string, double>> logs;
  void on_log(int64_t, const std::map<std::string, double>& v) override { logs.push_back(v); }
};

}  // namespace

TEST_SUITE("unit.trainer") {
  TEST_CASE(
      "a three-loss model: every term is logged (metrics.jsonl, TensorBoard, observers) with its value") {
    et::test::TempDir dir("trainer_terms");
    auto line = std::make_shared<LineImpl>(0.5f, 0.25f);
    auto forward = [line](const TensorMap& in) {
      at::Tensor h = line->forward(in.at("x"));  // [B]
      const at::Tensor& y = in.at("y");
      TensorMap out;
      out["a_loss"] = (h - y).pow(2).mean();
      out["b_loss"] = 0.1 * line->b.abs().sum();
      out["c_loss"] = 0.05 * line->w.pow(2).sum();
      out["loss"] = out["a_loss"] + out["b_loss"] + out["c_loss"];
      return out;
    };
    FnModel model(line, forward);
    auto ds = make_data(32);
    // Hand-computed losses of the first batch (examples 0-7) at the initial weights.
    std::map<std::string, double> first;
    {
      torch::NoGradGuard ng;
      auto b = data::collate(ds, {0, 1, 2, 3, 4, 5, 6, 7});
      for (auto& [k, v] : forward(b.tensors)) first[k] = v.item<double>();
    }
    auto ctx = sgd_context();
    Task task;
    Config cfg = train_config(dir.path(), "max_steps = 3\n");
    train::Trainer trainer(*ctx, cfg.view(), model, task, ds);
    Recorder rec;
    trainer.add_observer(rec);
    auto r = trainer.fit();
    CHECK(r.steps == 3);
    auto events = et::test::read_jsonl(dir / "metrics.jsonl");
    std::vector<nlohmann::json> train;
    for (auto& e : events)
      if (e["event"] == "train") train.push_back(e);
    REQUIRE(train.size() == 3);
    for (const char* k : {"a_loss", "b_loss", "c_loss", "loss"}) {
      CAPTURE(k);
      REQUIRE(train[0].contains(k));
      CHECK(train[0][k].get<double>() == doctest::Approx(first[k]).epsilon(1e-6));
    }
    for (auto& e : train)
      CHECK(e["loss"].get<double>() == doctest::Approx(e["a_loss"].get<double>() + e["b_loss"].get<double>() +
                                                       e["c_loss"].get<double>()));
    {  // SGD makes progress: the first batch's loss at the final weights is below its loss at the initial
       // ones
      // (the logged losses are of different batches, so comparing them would be noise).
      torch::NoGradGuard ng;
      auto b = data::collate(ds, {0, 1, 2, 3, 4, 5, 6, 7});
      CHECK(forward(b.tensors).at("loss").item<double>() < first["loss"]);
    }
    REQUIRE(rec.logs.size() == 3);
    CHECK(rec.logs[0].at("b_loss") == doctest::Approx(first["b_loss"]).epsilon(1e-6));
    CHECK(rec.logs[0].count("lr"));
    std::string tb;
    for (auto& f : std::filesystem::directory_iterator(dir / "tb"))
      tb = et::test::read_file(f.path().string());
    for (const char* tag : {"train/a_loss", "train/b_loss", "train/c_loss", "train/loss"})
      CHECK_MESSAGE(et::test::contains(tb, tag), tag);
    // The windows of every term are part of the resumable state.
    std::string latest;
    for (auto& f : std::filesystem::directory_iterator(dir.path()))
      if (f.path().filename().string().rfind("checkpoint-", 0) == 0) latest = f.path().string();
    auto st = et::test::read_json(latest + "/train_state/trainer_state.json");
    CHECK(st["loss_windows"].contains("c_loss"));
  }

  TEST_CASE("a distillation-style forward hook: no autograd, every micro-step, its outputs drive the loss") {
    et::test::TempDir dir("trainer_hook");
    auto teacher = std::make_shared<LineImpl>(-1.5f, 0.75f);
    auto student = std::make_shared<LineImpl>(0.0f, 0.0f);
    teacher->eval();
    const at::Tensor teacher_w = teacher->w.detach().clone();
    struct Teacher final : train::ForwardHook {
      std::shared_ptr<LineImpl> m;
      int calls = 0, with_grad = 0, in_train_mode = 0;
      void forward(const data::Batch&, const TensorMap& inputs, TensorMap& extras) override {
        ++calls;
        with_grad += torch::GradMode::is_enabled();
        in_train_mode += m->is_training();
        extras["teacher_logits"] = m->forward(inputs.at("x"));
      }
    } hook;
    hook.m = teacher;
    FnModel model(student, [student](const TensorMap& in) {
      return TensorMap{{"logits", student->forward(in.at("x"))}};
    });
    Task task;
    task.loss_fn = [](const TensorMap& out, const TensorMap& extras) {
      const at::Tensor& t = extras.at("teacher_logits");
      CHECK_FALSE(t.requires_grad());
      train::LossTerms l;
      l.total = torch::mse_loss(out.at("logits"), t);
      l.terms = {{"distill_loss", l.total}, {"zero_loss", l.total * 0}};
      return l;
    };
    auto ctx = sgd_context();
    auto ds = make_data(64);
    Config cfg =
        train_config(dir.path(), "epoch_num = 10\ngradient_accumulation_steps = 2\nmax_grad_norm = 0\n");
    train::Trainer trainer(*ctx, cfg.view(), model, task, ds);
    trainer.add_forward_hook(hook);
    auto r = trainer.fit();
    CHECK(r.steps == 40);         // 8 micro-batches an epoch, 2 per step, 10 epochs
    CHECK(hook.calls == 2 * 40);  // once per micro-step
    CHECK(hook.with_grad == 0);
    CHECK(hook.in_train_mode == 0);  // the trainer leaves the teacher's mode alone
    CHECK(torch::equal(teacher->w, teacher_w));
    CHECK_FALSE(teacher->w.grad().defined());
    // The student learned the teacher.
    CHECK(torch::allclose(student->w, teacher->w, 1e-3, 1e-3));
    CHECK(torch::allclose(student->b, teacher->b, 1e-3, 1e-3));
    auto last = et::test::read_jsonl(dir / "metrics.jsonl").back();
    CHECK(last.contains("distill_loss"));
  }

  TEST_CASE("a model that returns no 'loss' is a plugin error (exit 3), not a plain et::Error") {
    Task task;
    data::Batch batch;
    try {
      task.loss({{"logits", torch::ones({1})}}, batch, {});
      FAIL("no error");
    } catch (const PluginError& e) {
      CHECK(e.exit_code() == kExitPlugin);
      CHECK(std::string(e.what()).find("the model returned no 'loss'") == 0);
    }
  }

  TEST_CASE("trainer keys: one definition gives the schema default and the parsed default") {
    const auto& specs = train::trainer_config_specs();
    train::TrainerOptions defaults;
    Config c = Config::from_string("checkpoint_dir = \"x\"\n", "t");
    auto parsed = train::TrainerOptions::from_config(c.view());
    auto spec = [&](const std::string& k) {
      for (auto& s : specs)
        if (s.key == k) return s;
      FAIL("no spec " << k);
      return ConfigKeySpec();
    };
    CHECK(spec("epoch_num").default_toml == "3.0");
    CHECK(defaults.epoch_num == 3.0);
    CHECK(parsed.epoch_num == 3.0);
    CHECK(spec("warmup_proportion").default_toml == "0.1");
    CHECK(parsed.warmup_proportion == 0.1);
    CHECK(spec("lr_schedule").default_toml == "\"linear\"");
    CHECK(spec("lr_schedule").choices.size() == 4);
    CHECK(parsed.micro_batch_size == 32);
    CHECK(spec("zero_stage").max == 3.0);
    CHECK(spec("shuffle").type == "bool");
    CHECK_THROWS_AS(train::TrainerOptions::from_config(Config().view()),
                    ConfigError);  // checkpoint_dir unset
  }
}
