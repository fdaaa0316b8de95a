// evaluation.cpp: the observer that evaluates — every eval_steps, at each epoch end (eval_each_epoch) and at
// the end — keeps the best model (saved to checkpoint_dir) and agrees on it across ranks.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "loop.h"

namespace et::train {
namespace {

std::string fmt_metrics(const std::map<std::string, double>& m) {
  std::string s;
  for (auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + fmt_number(v);
  return s;
}

class Evaluation final : public LoopObserver {
 public:
  void after_step(Loop& L, const StepEvent& ev) override {
    const int64_t step = L.st.global_step;
    if (ev.stepped && L.o.eval_steps > 0 && step % L.o.eval_steps == 0) evaluate(L);
    if (ev.epoch_end && L.o.eval_each_epoch && L.last_eval_step != step) evaluate(L);
  }

  void on_end(Loop& L, bool interrupted) override {
    if (!interrupted && L.last_eval_step != L.st.global_step) evaluate(L);
  }

 private:
  static bool improves(const Loop& L, double v) {
    return L.greater ? v > L.st.best_metric : v < L.st.best_metric;
  }

  // Every rank calls this; rank 0 evaluates and decides (the others wait at the next collective).
  static void evaluate(Loop& L) {
    L.bar->clear();
    TrainState& st = L.st;
    L.last_eval_step = st.global_step;
    L.par.gather_model();
    if (L.is_main()) {
      L.set_training(false);
      auto t0 = std::chrono::steady_clock::now();
      L.last_metrics = L.task.evaluate();
      L.set_training(true);
      if (!L.last_metrics.empty()) {
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        L.log.info("eval at step ", st.global_step, ": ", fmt_metrics(L.last_metrics), " (",
                   fmt_number(secs, 3), " s)");
        L.reporter.eval(st.global_step, L.last_metrics);
        auto it = L.last_metrics.find(L.metric);
        if (it == L.last_metrics.end()) {
          L.log.warn("metric_for_best '", L.metric, "' is not among the evaluation metrics (",
                     fmt_metrics(L.last_metrics), ")");
        } else if (std::isfinite(it->second) && improves(L, it->second)) {
          st.best_metric = it->second;
          st.best_step = st.global_step;
          L.best_metrics = L.last_metrics;
          L.save_model_root("new best " + L.metric + " " + fmt_number(it->second));
        }
      }
    }
    if (L.par.distributed()) {  // rank 0 decided: every rank keeps the same best-model state
      st.best_step = static_cast<int64_t>(L.par.sum(L.is_main() ? static_cast<double>(st.best_step) : 0.0));
      double best = L.par.sum(L.is_main() && std::isfinite(st.best_metric) ? st.best_metric : 0.0);
      if (st.best_step >= 0) st.best_metric = best;
    }
    L.par.release_model();
  }
};

}  // namespace

std::unique_ptr<LoopObserver> make_evaluation() { return std::make_unique<Evaluation>(); }

}  // namespace et::train
