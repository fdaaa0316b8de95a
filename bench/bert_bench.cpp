// bert_bench.cpp: ethost-bench — BERT training and inference speed of model/bert + optimizer/adamw (loaded as
// plugins, fused kernels on and off) against a plain PyTorch eager BERT (bench/baseline/bert_eager.py)
// measured in the same run, on the same weights, inputs and thread count, after a logits parity check.
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_common.h"
#include "bench_report.h"
#include "cpu/blas_backend.h"
#include "ethost/config.h"
#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/log.h"
#include "ethost/train/autocast.h"
#include "plugin/host_context.h"
#include "plugin/loader.h"
#include "plugin/plugin_index.h"
#include "python_worker.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace et::bench;
using clock_type = std::chrono::steady_clock;

namespace {

struct Iters {
  int warmup = 0, iters = 0;
};

struct Spec {
  std::string name;
  BertShape shape;
  int64_t seq = 128, train_batch = 0, infer_batch = 32;
  Iters train, infer, latency;
};

struct Args {
  std::vector<std::string> configs = {"tiny", "base"};
  std::string precision = "both";
  int iters = 0, warmup = -1, latency_runs = 0, threads = 2;
  bool quick = false, parity_only = false, no_python = false;
  double bf16_budget = 60.0;
  std::string json_out = "bench_results.json";
  std::string python = "/usr/bin/python3";
  std::string baseline = ETHOST_SOURCE_DIR "/bench/baseline/bert_eager.py";
  std::string keep;
  std::string profile;            // chrome trace of a few fused training steps of the first config
  std::string task = "sequence";  // sequence | token | qa: the head (HF ...ForSequenceClassification /
                                  // ForTokenClassification / ForQuestionAnswering)
};

const char* kUsage =
    "Usage: ethost-bench [--configs tiny,base] [--precision fp32|bf16|both] [--iters N] [--warmup N]\n"
    "                    [--latency-runs N] [--threads N] [--quick] [--parity-only] [--bf16-budget SECONDS]\n"
    "                    [--json FILE] [--python EXE] [--baseline SCRIPT] [--no-python] [--keep DIR]\n"
    "                    [--profile TRACE.json] [--task sequence|token|qa]\n"
    "Measures model/bert + optimizer/adamw (fused_kernels on and off) against a PyTorch eager baseline:\n"
    "training samples/s, inference samples/s (batch 32), latency p50/p90 (batch 1), and MFU against the\n"
    "fp32 at::mm peak measured in the same run. --quick: tiny only, few iterations. --parity-only: only the\n"
    "logits check (C++ vs Python, same weights and inputs). Results: a table on stdout and --json FILE\n"
    "(default bench_results.json). --profile: also record an operator trace (chrome://tracing format) of\n"
    "3 fused training steps of the first config, and print the operators' self time. --task token: token\n"
    "classification (NER: 7 labels on every token, HF BertForTokenClassification) instead of the text's;\n"
    "--task qa: extractive question answering (start/end logits, HF BertForQuestionAnswering).\n";

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw et::UsageError(k + " needs a value", "command line", kUsage);
      return argv[++i];
    };
    auto number = [&]() {
      std::string v = value();
      try {
        return std::stoi(v);
      } catch (const std::exception&) {
        throw et::UsageError(k + " needs a number, got '" + v + "'", "command line", kUsage);
      }
    };
    if (k == "--configs") {
      a.configs.clear();
      std::stringstream ss(value());
      for (std::string c; std::getline(ss, c, ',');)
        if (!c.empty()) a.configs.push_back(c);
    } else if (k == "--precision") {
      a.precision = value();
      if (a.precision != "fp32" && a.precision != "bf16" && a.precision != "both")
        throw et::UsageError("--precision must be fp32, bf16 or both", "command line", kUsage);
    } else if (k == "--iters")
      a.iters = std::max(1, number());
    else if (k == "--warmup")
      a.warmup = std::max(0, number());
    else if (k == "--latency-runs")
      a.latency_runs = std::max(1, number());
    else if (k == "--threads")
      a.threads = std::max(1, number());
    else if (k == "--bf16-budget")
      a.bf16_budget = std::stod(value());
    else if (k == "--json")
      a.json_out = value();
    else if (k == "--python")
      a.python = value();
    else if (k == "--baseline")
      a.baseline = value();
    else if (k == "--keep")
      a.keep = value();
    else if (k == "--profile")
      a.profile = value();
    else if (k == "--task") {
      a.task = value();
      if (a.task != "sequence" && a.task != "token" && a.task != "qa")
        throw et::UsageError("--task must be sequence, token or qa", "command line", kUsage);
    } else if (k == "--quick")
      a.quick = true;
    else if (k == "--parity-only")
      a.parity_only = true;
    else if (k == "--no-python")
      a.no_python = true;
    else if (k == "--help" || k == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else
      throw et::UsageError("unknown argument '" + k + "'", "command line", kUsage);
  }
  if (a.quick) a.configs = {"tiny"};
  for (auto& c : a.configs)
    if (c != "tiny" && c != "base")
      throw et::UsageError("unknown config '" + c + "' (tiny, base)", "--configs", kUsage);
  if (a.parity_only && a.no_python)
    throw et::UsageError("--parity-only needs Python", "command line", kUsage);
  return a;
}

Spec make_spec(const std::string& name, const Args& a) {
  Spec s;
  s.name = name;
  s.shape.vocab = 21128;
  s.shape.labels = a.task == "token" ? 7 : 2;  // token: BIO tags of three entity types
  if (name == "tiny") {
    s.shape.layers = 4, s.shape.hidden = 256, s.shape.heads = 4, s.shape.intermediate = 1024;
    s.train_batch = 32;
    s.train = {2, 8}, s.infer = {2, 8}, s.latency = {5, 30};
    if (a.quick) s.train = {1, 2}, s.infer = {1, 2}, s.latency = {2, 5};
  } else {
    s.shape.layers = 12, s.shape.hidden = 768, s.shape.heads = 12, s.shape.intermediate = 3072;
    s.train_batch = 8;
    s.train = {1, 5}, s.infer = {1, 4}, s.latency = {3, 25};  // medians of 5: the VM drifts
  }
  if (a.iters > 0) s.train.iters = s.infer.iters = a.iters;
  if (a.warmup >= 0) s.train.warmup = s.infer.warmup = s.latency.warmup = a.warmup;
  if (a.latency_runs > 0) s.latency.iters = a.latency_runs;
  return s;
}

// ---- plugins: the real index, loader and context, as `ethost` builds them (<exe dir>/plugins).
struct Host {
  et::host::PluginIndex index;
  std::unique_ptr<et::host::PluginLoader> loader;
  std::unique_ptr<et::host::HostContext> ctx;
  explicit Host(int threads) {
    index.scan(et::host::make_search_path({}, false));
    loader = std::make_unique<et::host::PluginLoader>(index);
    ctx = std::make_unique<et::host::HostContext>(index, *loader, et::Config(), threads, et::WorldInfo{});
  }
  et::Config section(const std::string& kind, const std::string& name, const std::string& toml) {
    et::Config c;
    c.merge_from(et::Config::from_view(ctx->defaults_of(kind, name)));
    if (!toml.empty()) c.merge_from(et::Config::from_string(toml, "ethost-bench"));
    return c;
  }
  std::unique_ptr<et::Model> model(const std::string& toml) {
    return ctx->create<et::Model>("bert", section("model", "bert", toml).view());
  }
};

std::string g_task = "sequence";  // Args::task, for the helpers below

std::string head_name() {
  return g_task == "token" ? "token_classification" : g_task == "qa" ? "span" : "sequence_classification";
}
// The compared logits; qa: start and end stacked, [B, T, 2].
at::Tensor logits_of(const et::TensorMap& out) {
  if (g_task == "qa") return torch::stack({out.at("start_logits"), out.at("end_logits")}, -1);
  return out.at(g_task == "token" ? "token_logits" : "logits");
}

std::string model_toml(const std::string& dir, bool fused, bool no_dropout = false) {
  std::string t = "model_dir = \"" + dir + "\"\nheads = [\"" + head_name() +
                  "\"]\nfused_kernels = " + (fused ? "true" : "false") + "\n";
  if (no_dropout) t += "hidden_dropout_prob = 0.0\nattention_probs_dropout_prob = 0.0\n";
  return t;
}

struct Optim {
  std::unique_ptr<et::OptimizerFactory> factory;
  std::unique_ptr<et::Optimizer> opt;
};

// optimizer/adamw with its defaults (fused update on or off, like the model's kernels) over every trainable
// parameter, named as the trainer names them.
Optim make_optimizer(Host& h, et::Model& m, bool fused) {
  Optim o;
  o.factory = h.ctx->create<et::OptimizerFactory>(
      "adamw", h.section("optimizer", "adamw", fused ? "fused = true" : "fused = false").view());
  et::ParamGroup g;
  for (const auto& p : m.module().named_parameters())
    if (p.value().requires_grad()) {
      g.names.push_back(p.key());
      g.params.push_back(p.value());
    }
  o.opt = o.factory->make({g});
  return o;
}

json optimizer_hparams(Host& h) {
  auto c = h.section("optimizer", "adamw", "");
  auto v = c.view();
  return {{"learning_rate", v.get_double("learning_rate")},
          {"weight_decay", v.get_double("weight_decay")},
          {"beta1", v.get_double("beta1")},
          {"beta2", v.get_double("beta2")},
          {"eps", v.get_double("eps")},
          {"no_decay", v.get_string_list("no_decay")}};
}

et::TensorMap as_inputs(const Batch& b, bool labels) {
  et::TensorMap m{
      {"input_ids", b.input_ids}, {"attention_mask", b.attention_mask}, {"token_type_ids", b.token_type_ids}};
  if (labels && g_task == "qa") {  // labels [B, 2]: the answer's start and end positions
    m["start_positions"] = b.labels.select(1, 0).contiguous();
    m["end_positions"] = b.labels.select(1, 1).contiguous();
  } else if (labels) {
    m[g_task == "token" ? "token_labels" : "labels"] = b.labels;
  }
  return m;
}

at::Tensor train_step(et::Model& m, et::Optimizer& opt, const et::TensorMap& in, bool bf16) {
  opt.zero_grad();
  at::Tensor loss;
  {
    et::train::Bf16Autocast ac(bf16);
    loss = m.forward(in).at("loss");
  }
  loss.backward();
  opt.step();
  return loss;
}

template <class F>
Series timed(F&& fn, Iters it, int64_t batch) {
  Series s;
  s.batch = batch;
  s.warmup = it.warmup;
  for (int i = 0; i < it.warmup; ++i) fn();
  for (int i = 0; i < it.iters; ++i) {
    auto t0 = clock_type::now();
    fn();
    s.seconds.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  return s;
}

struct Inputs {
  Batch parity, latency, infer;
  std::vector<Batch> train;
};

// --task token: a label per token in [0, C) (deterministic), -100 on [CLS], [SEP] and padding, as HF's
// token-classification recipe labels them.
Batch with_token_labels(Batch b, int64_t C, uint64_t seed) {
  at::Tensor y = torch::full(b.input_ids.sizes(), -100, torch::kLong);
  auto Y = y.accessor<int64_t, 2>();
  auto M = b.attention_mask.accessor<int64_t, 2>();
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t r = 0; r < y.size(0); ++r) {
    int64_t len = 0;
    for (int64_t t = 0; t < y.size(1); ++t) len += M[r][t];
    for (int64_t t = 1; t + 1 < len; ++t) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      Y[r][t] = int64_t(x % uint64_t(C));
    }
  }
  b.labels = y;
  return b;
}

// --task qa: an answer span per row, start <= end inside the text (deterministic), as [B, 2] positions.
Batch with_span_labels(Batch b, uint64_t seed) {
  at::Tensor y = torch::zeros({b.input_ids.size(0), 2}, torch::kLong);
  auto Y = y.accessor<int64_t, 2>();
  auto M = b.attention_mask.accessor<int64_t, 2>();
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t r = 0; r < y.size(0); ++r) {
    int64_t len = 0;
    for (int64_t t = 0; t < b.attention_mask.size(1); ++t) len += M[r][t];
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t start = 1 + int64_t(x % uint64_t(std::max<int64_t>(1, len - 2)));
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    Y[r][0] = start;
    Y[r][1] = std::min(len - 2, start + int64_t(x % 16));
  }
  b.labels = y;
  return b;
}

Inputs make_inputs(const Spec& s) {
  Inputs in;
  const int64_t V = s.shape.vocab, C = s.shape.labels;
  auto mk = [&](uint64_t seed, int64_t batch) {
    Batch b = make_batch(seed, batch, s.seq, V, C);
    return g_task == "token" ? with_token_labels(b, C, seed) : g_task == "qa" ? with_span_labels(b, seed) : b;
  };
  in.parity = mk(1, 4);
  in.train = {mk(2, s.train_batch), mk(3, s.train_batch)};
  in.infer = mk(4, s.infer_batch);
  in.latency = mk(5, 1);
  return in;
}

void write_inputs(const Inputs& in, const std::string& path) {
  et::io::StateDict sd;
  auto put = [&](const std::string& name, const Batch& b) {
    sd.set(name + ".input_ids", b.input_ids);
    sd.set(name + ".attention_mask", b.attention_mask);
    sd.set(name + ".token_type_ids", b.token_type_ids);
    sd.set(name + ".labels", b.labels);
  };
  put("parity", in.parity);
  for (size_t i = 0; i < in.train.size(); ++i) put("train" + std::to_string(i), in.train[i]);
  put("infer", in.infer);
  put("latency", in.latency);
  et::io::write_safetensors(path, sd);
}

// One implementation of ethost (fused on or off): training, inference and latency, each on a fresh model
// loaded from the saved weights. Iterations with iters == 0 are skipped.
ImplResult measure_ethost(Host& h, const Spec& s, const Inputs& in, const std::string& dir, bool fused,
                          bool bf16, Iters train, Iters infer, Iters latency) {
  ImplResult r;
  r.impl = fused ? "ethost_fused" : "ethost_aten";
  if (train.iters > 0) {
    auto m = h.model(model_toml(dir, fused));
    m->module().train();
    auto o = make_optimizer(h, *m, fused);
    std::vector<et::TensorMap> batches;
    for (const auto& b : in.train) batches.push_back(as_inputs(b, true));
    size_t i = 0;
    r.train =
        timed([&] { train_step(*m, *o.opt, batches[i++ % batches.size()], bf16); }, train, s.train_batch);
  }
  if (infer.iters > 0 || latency.iters > 0) {
    auto m = h.model(model_toml(dir, fused));
    m->module().eval();
    for (auto [series, it, b, batch] : {std::make_tuple(&r.infer, infer, &in.infer, s.infer_batch),
                                        std::make_tuple(&r.latency, latency, &in.latency, int64_t{1})}) {
      if (it.iters == 0) continue;
      auto inputs = as_inputs(*b, false);
      *series = timed(
          [&] {
            torch::NoGradGuard no_grad;
            et::train::Bf16Autocast ac(bf16);
            m->forward(inputs);
          },
          it, batch);
    }
  }
  return r;
}

// --profile: an operator trace of 3 fused training steps (after 2 warm-up steps), and a table of each
// operator's self time (its duration minus that of the operators it called), summed over the 3 steps, largest
// first.
void profile_training(Host& h, const Spec& s, const Inputs& in, const std::string& dir, bool bf16,
                      const std::string& trace) {
  auto m = h.model(model_toml(dir, true));
  m->module().train();
  auto o = make_optimizer(h, *m, true);
  std::vector<et::TensorMap> batches;
  for (const auto& b : in.train) batches.push_back(as_inputs(b, true));
  for (int i = 0; i < 2; ++i) train_step(*m, *o.opt, batches[i % batches.size()], bf16);
  {
    torch::autograd::profiler::RecordProfile guard(trace);
    for (int i = 0; i < 3; ++i) train_step(*m, *o.opt, batches[i % batches.size()], bf16);
  }
  std::ifstream f(trace);
  json events = json::parse(f, nullptr, false);
  if (!events.is_array()) {
    std::cout << "profile: could not parse " << trace << "\n";
    return;
  }
  struct Ev {
    double ts, dur;
    std::string name;
    int64_t tid;
  };
  std::vector<Ev> ev;
  for (const auto& e : events)
    if (e.value("ph", "") == "X")
      ev.push_back(
          {e.value("ts", 0.0), e.value("dur", 0.0), e.value("name", ""), e.value("tid", int64_t{0})});
  std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
  });
  std::map<std::string, std::pair<double, int>> self;  // name -> (self us, calls)
  std::vector<size_t> stack;
  std::vector<double> child(ev.size(), 0.0);
  double total = 0.0;
  for (size_t i = 0; i < ev.size(); ++i) {
    while (!stack.empty() &&
           (ev[stack.back()].tid != ev[i].tid || ev[stack.back()].ts + ev[stack.back()].dur <= ev[i].ts))
      stack.pop_back();
    if (stack.empty())
      total += ev[i].dur;
    else
      child[stack.back()] += ev[i].dur;
    stack.push_back(i);
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    auto& e = self[ev[i].name];
    e.first += std::max(0.0, ev[i].dur - child[i]);
    e.second += 1;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(self.begin(), self.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::cout << "profile (" << s.name << ", 3 fused training steps, trace " << trace
            << "): operator self time\n";
  for (size_t i = 0; i < rows.size() && i < 30; ++i)
    std::cout << "  " << std::left << std::setw(48) << rows[i].first << std::right << std::setw(10)
              << std::fixed << std::setprecision(1) << rows[i].second.first / 3000.0 << " ms/step "
              << std::setw(6) << std::setprecision(1) << 100.0 * rows[i].second.first / std::max(total, 1.0)
              << "% " << std::setw(6) << rows[i].second.second / 3 << " calls/step\n";
  std::cout << "  total (top-level operators) " << std::setprecision(1) << total / 3000.0 << " ms/step\n";
}

// Both ethost implementations — and the Python baseline when py is given — at once, iterations alternating,
// so that the machine's drift during the run hits all alike: their ratios are then much less noisy than those
// of separate blocks. Python times its own iterations (not the pipe round trip).
std::vector<ImplResult> measure_interleaved(Host& h, const Spec& s, const Inputs& in, const std::string& dir,
                                            bool bf16, Iters train, Iters infer, Iters latency,
                                            et::bench::PythonWorker* py) {
  std::vector<ImplResult> r(py ? 3 : 2);
  r[0].impl = "ethost_fused";
  r[1].impl = "ethost_aten";
  if (py) r[2].impl = "python";
  const std::string precision = bf16 ? "bf16" : "fp32";
  // Each round runs every implementation once, in an order that rotates from round to round (fused, ATen,
  // Python; ATen, Python, fused; ...), so no implementation always follows the same one: after a switch of
  // process the idle process's OpenMP threads keep spinning for a few milliseconds (libgomp's default wait
  // policy) and the cache holds the other's data. py_block: Python's iterations run after ethost's instead —
  // for batch-1 latency, where those milliseconds are a large part of an iteration.
  auto alternate = [&](std::function<void()> f0, std::function<void()> f1, Iters it, int64_t batch,
                       Series ImplResult::*which, bool py_block) {
    for (auto& x : r) {
      (x.*which).batch = batch;
      (x.*which).warmup = it.warmup;
    }
    std::vector<std::function<double()>> impls = {
        [&] {
          auto t0 = clock_type::now();
          f0();
          return std::chrono::duration<double>(clock_type::now() - t0).count();
        },
        [&] {
          auto t0 = clock_type::now();
          f1();
          return std::chrono::duration<double>(clock_type::now() - t0).count();
        }};
    if (py && !py_block) impls.push_back([&] { return py->step(); });
    const size_t n = impls.size();
    for (int i = 0; i < it.warmup + it.iters; ++i)
      for (size_t k = 0; k < n; ++k) {
        const size_t j = (static_cast<size_t>(i) + k) % n;
        const double sec = impls[j]();
        if (i >= it.warmup) (r[j].*which).seconds.push_back(sec);
      }
    if (py && py_block) {
      for (int i = 0; i < it.warmup; ++i) py->step();
      for (int i = 0; i < it.iters; ++i) (r[2].*which).seconds.push_back(py->step());
    }
  };
  if (train.iters > 0) {
    if (py) py->setup(precision, "train");
    auto m0 = h.model(model_toml(dir, true)), m1 = h.model(model_toml(dir, false));
    m0->module().train();
    m1->module().train();
    auto o0 = make_optimizer(h, *m0, true), o1 = make_optimizer(h, *m1, false);
    std::vector<et::TensorMap> batches;
    for (const auto& b : in.train) batches.push_back(as_inputs(b, true));
    size_t i0 = 0, i1 = 0;
    alternate([&] { train_step(*m0, *o0.opt, batches[i0++ % batches.size()], bf16); },
              [&] { train_step(*m1, *o1.opt, batches[i1++ % batches.size()], bf16); }, train, s.train_batch,
              &ImplResult::train, false);
  }
  if (infer.iters > 0 || latency.iters > 0) {
    auto m0 = h.model(model_toml(dir, true)), m1 = h.model(model_toml(dir, false));
    m0->module().eval();
    m1->module().eval();
    for (auto [it, b, batch, kind] : {std::make_tuple(infer, &in.infer, s.infer_batch, "infer"),
                                      std::make_tuple(latency, &in.latency, int64_t{1}, "latency")}) {
      if (it.iters == 0) continue;
      if (py) py->setup(precision, kind);
      auto inputs = as_inputs(*b, false);
      auto fwd = [&](et::Model& m) {
        torch::NoGradGuard no_grad;
        et::train::Bf16Autocast ac(bf16);
        m.forward(inputs);
      };
      const bool is_latency = std::string(kind) == "latency";
      alternate([&] { fwd(*m0); }, [&] { fwd(*m1); }, it, batch,
                is_latency ? &ImplResult::latency : &ImplResult::infer, is_latency);
    }
  }
  return r;
}

// Parity: eval logits (dropout model in eval mode) and, with dropout 0, the loss before and after one AdamW
// step.
struct CppParity {
  at::Tensor logits;
  std::vector<double> losses;
};
CppParity cpp_parity(Host& h, const Inputs& in, const std::string& dir, bool fused) {
  CppParity p;
  {
    auto m = h.model(model_toml(dir, fused));
    m->module().eval();
    torch::NoGradGuard no_grad;
    p.logits = logits_of(m->forward(as_inputs(in.parity, false)));
  }
  auto m = h.model(model_toml(dir, fused, true));
  m->module().train();
  auto o = make_optimizer(h, *m, fused);
  auto inputs = as_inputs(in.parity, true);
  p.losses.push_back(train_step(*m, *o.opt, inputs, false).item<double>());
  o.opt->zero_grad();
  p.losses.push_back(m->forward(inputs).at("loss").item<double>());
  return p;
}

json iters_json(Iters it) { return {{"warmup", it.warmup}, {"iters", it.iters}}; }

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

std::string sci(double x) {
  std::ostringstream os;
  os << std::scientific << std::setprecision(2) << x;
  return os.str();
}

std::string seconds_str(double s) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << s << " s";
  return os.str();
}

struct Peaks {
  Peak fp32, bf16;
  bool bf16_fast() const { return bf16.gflops >= 0.5 * fp32.gflops; }
};

struct RunPlan {
  std::string precision;
  Iters train, infer, latency;
};

ConfigResult run_config(Host& h, const Args& a, const Spec& s, const Peaks& peaks, const fs::path& tmp,
                        json& python_info) {
  const auto t_start = clock_type::now();
  ConfigResult c;
  c.name = s.name;
  c.shape = s.shape;
  c.seq = s.seq;
  c.train_batch = s.train_batch;
  c.infer_batch = s.infer_batch;
  c.loadavg_start = loadavg();
  const fs::path dir = tmp / s.name;
  const std::string model_dir = (dir / "model").string();
  fs::create_directories(model_dir);
  {
    // Fresh weights (seed 42) written as an HF checkpoint; every model below, C++ and Python, loads this
    // file.
    std::ostringstream t;
    t << "heads = [\"" << head_name() << "\"]\nnum_labels = " << s.shape.labels
      << "\nvocab_size = " << s.shape.vocab << "\nhidden_size = " << s.shape.hidden
      << "\nnum_hidden_layers = " << s.shape.layers << "\nnum_attention_heads = " << s.shape.heads
      << "\nintermediate_size = " << s.shape.intermediate << "\nseed = 42\n";
    h.model(t.str())->save(model_dir);
  }
  const Inputs in = make_inputs(s);
  const std::string inputs_path = (dir / "inputs.safetensors").string();
  write_inputs(in, inputs_path);
  std::cout << "\n== " << s.name << " ("
            << (a.task == "qa" ? "question answering" : a.task + " classification") << "): " << s.shape.layers
            << " layers, hidden " << s.shape.hidden << ", " << s.shape.heads << " heads, intermediate "
            << s.shape.intermediate << ", vocab " << s.shape.vocab << ", seq " << s.seq << ", " << std::fixed
            << std::setprecision(1) << static_cast<double>(parameter_count(s.shape)) / 1e6
            << "M parameters; train batch " << s.train_batch << ", inference batch " << s.infer_batch
            << " (load average " << c.loadavg_start << ")\n"
            << std::flush;

  // C++ parity side (fp32).
  std::map<bool, CppParity> cp;
  if (!a.no_python)
    for (bool fused : {true, false}) cp[fused] = cpp_parity(h, in, model_dir, fused);

  // The measurement plan: fp32 as specified; bf16 likewise when the CPU has fast bf16 matmul, else reduced.
  std::vector<RunPlan> plans;
  std::vector<PrecisionResult> results;
  if (!a.parity_only) {
    if (a.precision != "bf16") plans.push_back({"fp32", s.train, s.infer, s.latency});
    if (a.precision != "fp32") plans.push_back({"bf16", s.train, s.infer, s.latency});
  }
  if (!a.profile.empty() && s.name == a.configs.front())
    profile_training(h, s, in, model_dir, a.precision == "bf16", a.profile);
  // The Python baseline's job (model, inputs, threads, optimizer); a worker process runs its iterations
  // interleaved with ethost's, the one-shot run below does the parity check and any non-interleaved plan.
  json job = {{"model_dir", model_dir},
              {"inputs", inputs_path},
              {"task", a.task},
              {"threads", a.threads},
              {"optimizer", optimizer_hparams(h)},
              {"parity", true},
              {"out", (dir / "python_result.json").string()}};
  const std::string job_path = (dir / "python_job.json").string();
  std::ofstream(job_path) << job.dump(2) << "\n";
  std::unique_ptr<et::bench::PythonWorker> worker;
  std::vector<bool> interleaved;
  for (auto& plan : plans) {
    interleaved.push_back(false);
    PrecisionResult pr;
    pr.precision = plan.precision;
    const bool bf16 = plan.precision == "bf16";
    if (bf16 && !peaks.bf16_fast()) {
      // bf16 matmul far below fp32 (no AVX512-BF16/AMX): latency first, then what fits in --bf16-budget.
      std::ostringstream why;
      why << "bf16 slower than fp32 on this CPU: " << std::setprecision(1) << std::fixed << peaks.bf16.gflops
          << " GFLOP/s vs " << peaks.fp32.gflops << " GFLOP/s (at::mm)";
      if (s.name != "tiny") {
        pr.notes.push_back(why.str() + "; bf16 runs the tiny config only");
        std::cout << "bf16: skipped (" << pr.notes.back() << ")\n";
        results.push_back(pr);
        plan.train = plan.infer = plan.latency = {0, 0};
        continue;
      }
      const auto t0 = clock_type::now();
      plan.latency = {1, 3};
      ImplResult probe = measure_ethost(h, s, in, model_dir, true, true, {0, 0}, {0, 0}, plan.latency);
      const double per_sample = median(probe.latency.seconds);  // one sequence forward, batch 1
      const double spent = std::chrono::duration<double>(clock_type::now() - t0).count();
      double left = a.bf16_budget - 2.0 * spent;  // the other two implementations' latency runs
      const double infer_cost =
          3.0 * 2.0 * static_cast<double>(s.infer_batch) * per_sample;  // 3 impls, 1+1 iters
      const double train_cost = 3.0 * 2.0 * 3.0 * static_cast<double>(s.train_batch) * per_sample;
      plan.infer = plan.train = {0, 0};
      std::string note = why.str() + "; tiny only, few iterations";
      if (infer_cost <= left) {
        plan.infer = {1, 1};
        left -= infer_cost;
      } else {
        note += "; inference throughput skipped (projected " + seconds_str(infer_cost) + ")";
      }
      if (train_cost <= left)
        plan.train = {1, 1};
      else
        note += "; training skipped (projected " + seconds_str(train_cost) + " > --bf16-budget)";
      pr.notes.push_back(note);
      std::cout << "bf16: " << note << "\n" << std::flush;
      ImplResult fused = measure_ethost(h, s, in, model_dir, true, true, plan.train, plan.infer, {0, 0});
      fused.latency = probe.latency;
      pr.impls.push_back(fused);
      pr.impls.push_back(
          measure_ethost(h, s, in, model_dir, false, true, plan.train, plan.infer, plan.latency));
    } else {
      if (!a.no_python && !worker) {
        std::cout << "starting the Python baseline (" << a.python << " " << a.baseline << " --serve)...\n"
                  << std::flush;
        worker = std::make_unique<et::bench::PythonWorker>(a.python, a.baseline, job_path);
      }
      std::cout << plan.precision << ": measuring ethost (fused_kernels = true and false)"
                << (worker ? " and the Python baseline" : "") << ", iterations alternating...\n"
                << std::flush;
      for (auto& r :
           measure_interleaved(h, s, in, model_dir, bf16, plan.train, plan.infer, plan.latency, worker.get()))
        pr.impls.push_back(r);
      interleaved.back() = worker != nullptr;
    }
    results.push_back(pr);
  }

  worker.reset();
  // The Python baseline's one-shot run: parity, and the plans not measured interleaved.
  if (!a.no_python) {
    json runs = json::array();
    for (size_t i = 0; i < plans.size(); ++i)
      if (const auto& p = plans[i]; !interleaved[i] && p.train.iters + p.infer.iters + p.latency.iters > 0)
        runs.push_back({{"precision", p.precision},
                        {"train", iters_json(p.train)},
                        {"infer", iters_json(p.infer)},
                        {"latency", iters_json(p.latency)}});
    job["runs"] = runs;
    std::ofstream(job_path) << job.dump(2) << "\n";
    std::cout << "running the Python baseline (" << a.python << " " << a.baseline << ")...\n" << std::flush;
    int status = 0;
    run_command(shell_quote(a.python) + " " + shell_quote(a.baseline) + " " + shell_quote(job_path), &status);
    if (status != 0)
      throw et::InternalError("the Python baseline failed (exit " + std::to_string(status) +
                              "): " + a.python + " " + a.baseline + " " + job_path);
    json py = json::parse(std::ifstream(dir / "python_result.json"));
    python_info = {{"python", py["python"]}, {"torch", py["torch"]}, {"threads", py["threads"]}};
    if (py["threads"].get<int>() != a.threads)
      std::cout << "WARNING: Python runs with " << py["threads"] << " threads, ethost with " << a.threads
                << "\n";

    // Parity.
    std::vector<float> flat;  // Python floats of float32 values: exact
    for (const auto& x : py["parity"]["logits"]) flat.push_back(x.get<float>());
    const at::Tensor py_logits = torch::tensor(flat).view_as(cp[true].logits);
    Parity& p = c.parity;
    p.ran = true;
    p.batch = in.parity.input_ids.size(0);
    p.diff_fused = max_abs_diff(cp[true].logits, py_logits);
    p.diff_aten = max_abs_diff(cp[false].logits, py_logits);
    p.diff_fused_aten = max_abs_diff(cp[true].logits, cp[false].logits);
    p.cpp_losses = cp[true].losses;
    p.py_losses = py["parity"]["train_losses"].get<std::vector<double>>();
    p.loss_diff = 0;
    for (size_t i = 0; i < p.cpp_losses.size() && i < p.py_losses.size(); ++i)
      p.loss_diff = std::max(p.loss_diff, std::abs(p.cpp_losses[i] - p.py_losses[i]));
    const bool ok = p.diff_fused <= 1e-4 && p.diff_aten <= 1e-4;
    std::cout << "parity " << s.name << " (fp32, eval, batch " << p.batch
              << "): logits max abs diff C++ vs Python = " << sci(p.diff_fused) << " (fused), "
              << sci(p.diff_aten) << " (ATen); fused vs ATen " << sci(p.diff_fused_aten) << " -> "
              << (ok ? "OK" : "FAIL") << " (tolerance 1e-4)\n"
              << "parity " << s.name << " (fp32, dropout 0): training loss before/after one AdamW step C++ "
              << std::setprecision(7) << p.cpp_losses[0] << "/" << p.cpp_losses[1] << ", Python "
              << p.py_losses[0] << "/" << p.py_losses[1] << ", max abs diff " << sci(p.loss_diff) << "\n";

    size_t k = 0;
    for (auto& pr : results) {
      const size_t pi = static_cast<size_t>(&pr - &results[0]);
      const RunPlan& plan = plans[pi];
      if (interleaved[pi] || plan.train.iters + plan.infer.iters + plan.latency.iters == 0) continue;
      const json& pj = py["runs"].at(k++);
      ImplResult r;
      r.impl = "python";
      auto load = [&](const char* key, Iters it, int64_t batch) {
        Series sr;
        sr.batch = batch;
        sr.warmup = it.warmup;
        if (pj.contains(key)) sr.seconds = pj[key].get<std::vector<double>>();
        return sr;
      };
      r.train = load("train_step_s", plan.train, s.train_batch);
      r.infer = load("infer_s", plan.infer, s.infer_batch);
      r.latency = load("latency_s", plan.latency, 1);
      pr.impls.push_back(r);
    }
  }
  c.precisions = results;
  c.loadavg_end = loadavg();
  c.seconds = std::chrono::duration<double>(clock_type::now() - t_start).count();
  return c;
}

json peak_json(const Peak& p) {
  json sizes = json::array();
  for (const auto& s : p.sizes) sizes.push_back({{"n", s.n}, {"gflops", s.gflops}, {"runs", s.runs}});
  return {{"gflops", p.gflops}, {"sizes", sizes}};
}

int run(const Args& a) {
  const auto t_start = clock_type::now();
  g_task = a.task;
  et::log::set_level(et::log::Level::warn);
  at::set_num_threads(a.threads);
  torch::manual_seed(0);
  const MachineInfo mi = machine_info();
  std::string isa;
  for (const auto& f : mi.isa) isa += (isa.empty() ? "" : " ") + f;
  std::cout
      << "ethost-bench: " << mi.cpu_model << ", " << mi.logical_cpus << " logical CPUs, ISA: " << isa << "\n"
      << "threads: " << a.threads << " (at::get_num_threads() = " << at::get_num_threads() << "), LibTorch "
      << TORCH_VERSION << ", load average " << loadavg() << "\n"
      << "BLAS: " << et::host::cpu::blas_summary()
      << " (the Python baseline runs with the same environment)\n"
      << "data: batches are pre-built tensors (no reader, tokenizer or trainer in the timed loop: the loop "
         "never waits for data)\n"
      << std::flush;

  Peaks peaks;
  if (!a.parity_only) {
    peaks.fp32 = matmul_peak(at::kFloat, {1024, 1536, 2048}, 4, 20.0);
    if (a.precision != "fp32") peaks.bf16 = matmul_peak(at::kBFloat16, {512, 1024, 2048}, 3, 8.0);
    std::cout << "matmul peak (at::mm, square, best of runs): fp32 " << std::fixed << std::setprecision(1)
              << peaks.fp32.gflops << " GFLOP/s";
    if (a.precision != "fp32") std::cout << ", bf16 " << peaks.bf16.gflops << " GFLOP/s";
    std::cout << "\n" << std::flush;
  }

  const fs::path tmp = !a.keep.empty()
                           ? fs::path(a.keep)
                           : fs::temp_directory_path() / ("ethost-bench-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  Host host(a.threads);
  json python_info;
  std::vector<ConfigResult> results;
  try {
    for (const auto& name : a.configs)
      results.push_back(run_config(host, a, make_spec(name, a), peaks, tmp, python_info));
  } catch (...) {
    if (a.keep.empty()) fs::remove_all(tmp);
    throw;
  }
  if (!a.parity_only) {
    // The machine's speed drifts (shared host): the peak again at the end, the higher of the two is the
    // reference.
    Peak again = matmul_peak(at::kFloat, {1024, 1536, 2048}, 4, 10.0);
    std::cout << "matmul peak re-measured at the end: fp32 " << std::fixed << std::setprecision(1)
              << again.gflops << " GFLOP/s (start " << peaks.fp32.gflops << "); MFU uses the higher\n";
    if (again.gflops > peaks.fp32.gflops) peaks.fp32 = again;
  }
  if (a.keep.empty()) fs::remove_all(tmp);

  bool parity_ok = true;
  for (const auto& c : results)
    if (c.parity.ran) parity_ok = parity_ok && c.parity.diff_fused <= 1e-4 && c.parity.diff_aten <= 1e-4;
  if (!a.parity_only) {
    std::cout << "\nResults (" << a.threads
              << " threads; throughput ratios ethost/Python: higher is better; latency "
              << "ratios ethost/Python: lower is better; MFU = model FLOP/s / fp32 at::mm peak "
              << std::setprecision(1) << peaks.fp32.gflops << " GFLOP/s)\n";
    for (const auto& c : results) print_config_table(std::cout, c, peaks.fp32.gflops);
  }
  const double total = std::chrono::duration<double>(clock_type::now() - t_start).count();
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::localtime(&now));
  json configs = json::array();
  for (const auto& c : results) configs.push_back(config_json(c, peaks.fp32.gflops));
  json report = {
      {"bench", "ethost-bench"},
      {"finished", stamp},
      {"total_seconds", total},
      {"machine",
       {{"cpu_model", mi.cpu_model},
        {"logical_cpus", mi.logical_cpus},
        {"isa", mi.isa},
        {"kernel", mi.kernel}}},
      {"threads", a.threads},
      {"blas", {{"core", et::host::cpu::query_blas().corename}, {"summary", et::host::cpu::blas_summary()}}},
      {"libtorch", TORCH_VERSION},
      {"python", python_info},
      {"options",
       {{"configs", a.configs},
        {"task", a.task},
        {"precision", a.precision},
        {"quick", a.quick},
        {"parity_only", a.parity_only}}},
      {"data_wait", "none: batches are pre-built tensors, no reader or trainer in the timed loop"},
      {"flops_formula",
       "forward = 2*B*T*L*(4H^2 + 2HI) + 4*B*T^2*H*L + 2*B*(H^2 + H*C); train step = 3 * forward; "
       "MFU = FLOPs / median iteration seconds / fp32 at::mm peak"},
      {"parity_ok", parity_ok},
      {"configs", configs}};
  if (!a.parity_only) report["peaks"] = {{"fp32", peak_json(peaks.fp32)}, {"bf16", peak_json(peaks.bf16)}};
  std::ofstream(a.json_out) << report.dump(2) << "\n";
  std::cout << "\ntotal bench time " << std::fixed << std::setprecision(1) << total << " s; wrote "
            << a.json_out << "\n";
  return parity_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // As ethost does: run on the right OpenBLAS core; the Python baseline inherits the choice (its best setting
  // too).
  et::host::cpu::ensure_blas_core(argv);
  try {
    return run(parse_args(argc, argv));
  } catch (const et::Error& e) {
    std::cerr << "ethost-bench: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "ethost-bench: " << e.what() << "\n";
    return 1;
  }
}
