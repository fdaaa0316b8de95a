// loop.cpp: the loss windows and the reporter (metrics.jsonl, TensorBoard, app observers) the loop shares.
#include "loop.h"

#include <filesystem>
#include <iomanip>
#include <sstream>

namespace fs = std::filesystem;

namespace et::train {

std::string fmt_number(double v, int prec) {
  std::ostringstream os;
  os << std::setprecision(prec) << v;
  return os.str();
}

void LossWindows::push(const std::map<std::string, double>& values, int64_t size) {
  for (const auto& [name, v] : values) {
    auto& w = w_[name];
    w.push_back(v);
    while (static_cast<int64_t>(w.size()) > size) w.pop_front();
  }
}

double LossWindows::mean(const std::string& name) const {
  auto it = w_.find(name);
  if (it == w_.end() || it->second.empty()) return 0.0;
  double s = 0;
  for (double x : it->second) s += x;
  return s / static_cast<double>(it->second.size());
}

std::map<std::string, double> LossWindows::means() const {
  std::map<std::string, double> m;
  for (const auto& [name, w] : w_) m[name] = mean(name);
  return m;
}

size_t LossWindows::count(const std::string& name) const {
  auto it = w_.find(name);
  return it == w_.end() ? 0 : it->second.size();
}

double LossWindows::last(const std::string& name) const {
  auto it = w_.find(name);
  return it == w_.end() || it->second.empty() ? 0.0 : it->second.back();
}

std::map<std::string, std::vector<double>> LossWindows::state() const {
  std::map<std::string, std::vector<double>> s;
  for (const auto& [name, w] : w_) s[name].assign(w.begin(), w.end());
  return s;
}

void LossWindows::restore(const std::map<std::string, std::vector<double>>& state) {
  w_.clear();
  for (const auto& [name, v] : state) w_[name].assign(v.begin(), v.end());
}

void Reporter::open(const std::string& dir, bool resumed, bool tensorboard, const log::Logger& log) {
  // A resumed run continues metrics.jsonl; a fresh run in a used directory keeps the old file aside instead
  // of mixing two runs' events in one file.
  const std::string path = dir + "/metrics.jsonl";
  std::error_code ec;
  if (!resumed && fs::exists(path, ec)) {
    fs::rename(path, dir + "/metrics.previous.jsonl", ec);
    log.info("a previous run's metrics.jsonl was moved to metrics.previous.jsonl");
  }
  metrics_ = std::make_unique<MetricsLog>(path);
  if (tensorboard) tb_ = std::make_unique<TensorBoardWriter>(dir + "/tb");
}

void Reporter::train(int64_t step, const std::map<std::string, double>& values) {
  if (!metrics_) return;
  metrics_->write(metrics_json_line("train", step, values));
  if (tb_)
    for (const auto& [k, v] : values)
      if (k != "epoch" && k != "data_wait_fraction" && k.rfind("allreduce", 0) != 0)
        tb_->add_scalar("train/" + k, v, step);
  for (auto* o : observers) o->on_log(step, values);
}

void Reporter::eval(int64_t step, const std::map<std::string, double>& metrics) {
  if (!metrics_) return;
  metrics_->write(metrics_json_line("eval", step, metrics));
  if (tb_)
    for (const auto& [k, v] : metrics) tb_->add_scalar("eval/" + k, v, step);
  for (auto* o : observers) o->on_evaluate(step, metrics);
}

void Reporter::memory(int64_t step, const std::map<std::string, double>& values) {
  if (metrics_) metrics_->write(metrics_json_line("memory", step, values));
}

void Reporter::flush() {
  if (tb_) tb_->flush();
}

}  // namespace et::train
