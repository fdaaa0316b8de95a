// bench_report.cpp: see bench_report.h.
#include "bench_report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace et::bench {
namespace {

const char* kImpls[] = {"ethost_fused", "ethost_aten", "python"};

std::string fmt(double x, int precision, const char* suffix = "") {
  if (!(x > 0)) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << x << suffix;
  return os.str();
}

std::string ratio(double a, double b) {
  if (!(a > 0) || !(b > 0)) return "-";
  return fmt(a / b, 2, "x");
}

double latency_ms(const Series& s, double p) { return s.ran() ? percentile(s.seconds, p) * 1e3 : 0.0; }

nlohmann::json series_json(const ConfigResult& c, const Series& s, const std::string& kind, double peak) {
  nlohmann::json j = {{"batch", s.batch}, {"warmup", s.warmup}, {"seconds", s.seconds},
                      {"median_s", median(s.seconds)}, {"mean_s", mean(s.seconds)}};
  if (kind == "latency") {
    j["p50_ms"] = latency_ms(s, 50);
    j["p90_ms"] = latency_ms(s, 90);
  } else {
    j["samples_per_s"] = samples_per_s(s);
  }
  j["mfu"] = mfu(c, s, kind, peak);
  return j;
}

}  // namespace

const ImplResult* PrecisionResult::find(const std::string& impl) const {
  for (const auto& r : impls)
    if (r.impl == impl) return &r;
  return nullptr;
}

double samples_per_s(const Series& s) {
  return s.ran() ? static_cast<double>(s.batch) / median(s.seconds) : 0.0;
}

double mfu(const ConfigResult& c, const Series& s, const std::string& kind, double peak) {
  if (!s.ran() || !(peak > 0)) return 0.0;
  const double flops = kind == "train" ? train_flops(c.shape, s.batch, c.seq) : forward_flops(c.shape, s.batch, c.seq);
  return flops / median(s.seconds) / (peak * 1e9);
}

void print_config_table(std::ostream& os, const ConfigResult& c, double peak) {
  for (const auto& p : c.precisions) {
    const ImplResult* r[3];
    for (int i = 0; i < 3; ++i) r[i] = p.find(kImpls[i]);
    auto get = [&](int i, auto fn) { return r[i] ? fn(*r[i]) : 0.0; };
    os << "\n" << c.name << " " << p.precision << "  (" << c.shape.layers << " layers, hidden " << c.shape.hidden
       << ", seq " << c.seq << ")\n";
    os << std::left << std::setw(26) << "" << std::right << std::setw(13) << "ethost fused" << std::setw(13)
       << "ethost ATen" << std::setw(11) << "Python" << std::setw(11) << "fused/Py" << std::setw(10) << "ATen/Py"
       << "\n";
    auto row = [&](const std::string& label, double a, double b, double py, int prec, const char* unit) {
      os << std::left << std::setw(26) << label << std::right << std::setw(13) << fmt(a, prec, unit) << std::setw(13)
         << fmt(b, prec, unit) << std::setw(11) << fmt(py, prec, unit) << std::setw(11) << ratio(a, py)
         << std::setw(10) << ratio(b, py) << "\n";
    };
    auto mfu_row = [&](const std::string& kind, auto pick) {
      double v[3];
      for (int i = 0; i < 3; ++i) v[i] = r[i] ? 100.0 * mfu(c, pick(*r[i]), kind, peak) : 0.0;
      os << std::left << std::setw(26) << "  MFU (of fp32 peak)" << std::right << std::setw(13) << fmt(v[0], 1, "%")
         << std::setw(13) << fmt(v[1], 1, "%") << std::setw(11) << fmt(v[2], 1, "%") << "\n";
    };
    const std::string tb = std::to_string(c.train_batch), ib = std::to_string(c.infer_batch);
    auto train = [](const ImplResult& x) -> const Series& { return x.train; };
    auto infer = [](const ImplResult& x) -> const Series& { return x.infer; };
    auto lat = [](const ImplResult& x) -> const Series& { return x.latency; };
    row("train samples/s (b" + tb + ")", get(0, [&](auto& x) { return samples_per_s(x.train); }),
        get(1, [&](auto& x) { return samples_per_s(x.train); }), get(2, [&](auto& x) { return samples_per_s(x.train); }),
        2, "");
    mfu_row("train", train);
    row("infer samples/s (b" + ib + ")", get(0, [&](auto& x) { return samples_per_s(x.infer); }),
        get(1, [&](auto& x) { return samples_per_s(x.infer); }), get(2, [&](auto& x) { return samples_per_s(x.infer); }),
        2, "");
    mfu_row("infer", infer);
    row("latency p50 ms (b1)", get(0, [&](auto& x) { return latency_ms(x.latency, 50); }),
        get(1, [&](auto& x) { return latency_ms(x.latency, 50); }),
        get(2, [&](auto& x) { return latency_ms(x.latency, 50); }), 2, "");
    row("latency p90 ms (b1)", get(0, [&](auto& x) { return latency_ms(x.latency, 90); }),
        get(1, [&](auto& x) { return latency_ms(x.latency, 90); }),
        get(2, [&](auto& x) { return latency_ms(x.latency, 90); }), 2, "");
    mfu_row("latency", lat);
    if (r[0]) {
      os << std::left << std::setw(26) << "  timed iterations" << std::right << std::setw(13)
         << (std::to_string(r[0]->train.seconds.size()) + "/" + std::to_string(r[0]->infer.seconds.size()) + "/" +
             std::to_string(r[0]->latency.seconds.size()))
         << "   (train/infer/latency; throughput from the median iteration)\n";
    }
    for (const auto& n : p.notes) os << "  note: " << n << "\n";
  }
}

nlohmann::json config_json(const ConfigResult& c, double peak) {
  const auto& s = c.shape;
  nlohmann::json j = {
      {"name", c.name},
      {"shape",
       {{"layers", s.layers}, {"hidden", s.hidden}, {"heads", s.heads}, {"intermediate", s.intermediate},
        {"vocab", s.vocab}, {"labels", s.labels}, {"seq", c.seq}, {"train_batch", c.train_batch},
        {"infer_batch", c.infer_batch}, {"latency_batch", 1}}},
      {"parameters", parameter_count(s)},
      {"matmul_parameters", matmul_parameter_count(s)},
      {"flops",
       {{"train_step", train_flops(s, c.train_batch, c.seq)},
        {"infer_batch", forward_flops(s, c.infer_batch, c.seq)},
        {"latency_forward", forward_flops(s, 1, c.seq)}}},
      {"loadavg_start", c.loadavg_start},
      {"loadavg_end", c.loadavg_end},
      {"seconds", c.seconds}};
  if (c.parity.ran) {
    const auto& p = c.parity;
    j["parity"] = {{"batch", p.batch},
                   {"logits_max_abs_diff_fused_vs_python", p.diff_fused},
                   {"logits_max_abs_diff_aten_vs_python", p.diff_aten},
                   {"logits_max_abs_diff_fused_vs_aten", p.diff_fused_aten},
                   {"train_losses_cpp", p.cpp_losses},
                   {"train_losses_python", p.py_losses},
                   {"train_loss_max_abs_diff", p.loss_diff},
                   {"tolerance", 1e-4},
                   {"ok", p.diff_fused >= 0 && p.diff_fused <= 1e-4 && p.diff_aten >= 0 && p.diff_aten <= 1e-4}};
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& p : c.precisions) {
    nlohmann::json pj = {{"precision", p.precision}, {"notes", p.notes}};
    nlohmann::json impls = nlohmann::json::object();
    for (const auto& r : p.impls) {
      nlohmann::json ij = nlohmann::json::object();
      if (r.train.ran()) ij["train"] = series_json(c, r.train, "train", peak);
      if (r.infer.ran()) ij["infer"] = series_json(c, r.infer, "infer", peak);
      if (r.latency.ran()) ij["latency"] = series_json(c, r.latency, "latency", peak);
      impls[r.impl] = ij;
    }
    pj["impls"] = impls;
    // ethost / Python: throughput ratios (higher is better) and latency ratios (lower is better).
    nlohmann::json ratios = nlohmann::json::object();
    const ImplResult* py = p.find("python");
    for (const char* impl : {"ethost_fused", "ethost_aten"}) {
      const ImplResult* e = p.find(impl);
      if (!e || !py) continue;
      auto q = [](double a, double b) { return a > 0 && b > 0 ? nlohmann::json(a / b) : nlohmann::json(nullptr); };
      ratios[std::string(impl) + "_vs_python"] = {
          {"train_samples_per_s", q(samples_per_s(e->train), samples_per_s(py->train))},
          {"infer_samples_per_s", q(samples_per_s(e->infer), samples_per_s(py->infer))},
          {"latency_p50", q(latency_ms(e->latency, 50), latency_ms(py->latency, 50))},
          {"latency_p90", q(latency_ms(e->latency, 90), latency_ms(py->latency, 90))}};
    }
    pj["ratios"] = ratios;
    results.push_back(pj);
  }
  j["results"] = results;
  return j;
}

}  // namespace et::bench
