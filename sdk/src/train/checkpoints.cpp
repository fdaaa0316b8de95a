// checkpoints.cpp: the observer that writes resumable checkpoints — every save_checkpoint_steps (or at each
// epoch end), on a stop signal, and at the end — and prunes the oldest beyond keep_checkpoint_max.
#include "loop.h"

namespace et::train {
namespace {

class Checkpoints final : public LoopObserver {
 public:
  void after_step(Loop& L, const StepEvent& ev) override {
    const int64_t every = L.o.save_checkpoint_steps, step = L.st.global_step;
    if (ev.stop || (ev.stepped && every > 0 && step % every == 0) || (ev.epoch_end && every == 0))
      checkpoint(L);
  }

  void on_end(Loop& L, bool interrupted) override {
    if (!interrupted) checkpoint(L);  // the end state is always resumable
  }

 private:
  void checkpoint(Loop& L) {
    TrainState& st = L.st;
    if (last_ == st.global_step) return;
    last_ = st.global_step;
    L.bar->clear();
    auto opt_state = L.par.optimizer().state();  // collective under ZeRO: every rank
    L.par.gather_model();
    st.loss_windows = L.losses.state();
    st.data_cursor = L.source.cursor();
    st.loss_scale = L.precision.loss_scale();
    st.loss_scale_good_steps = L.precision.good_steps();
    if (L.is_main()) {
      std::string dir = save_checkpoint(L.o.checkpoint_dir, st, L.task, opt_state);
      prune_checkpoints(L.o.checkpoint_dir, L.o.keep_checkpoint_max);
      L.log.info("checkpoint written: ", dir);
    }
    L.par.barrier();
    L.par.release_model();
  }

  int64_t last_ = -1;
};

}  // namespace

std::unique_ptr<LoopObserver> make_checkpoints() { return std::make_unique<Checkpoints>(); }

}  // namespace et::train
