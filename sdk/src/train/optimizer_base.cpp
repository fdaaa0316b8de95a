// optimizer_base.cpp: the optimizer plugins' shared base — slots from parameter groups, state save/restore
// with shape checks.
#include "ethost/train/optimizer_base.h"

#include <torch/torch.h>

#include <sstream>

#include "ethost/error.h"

namespace et::train {

struct OptimizerBase::State {
  std::string kind;
  std::vector<std::string> state_names;
  std::vector<OptimizerSlot> slots;
  double lr = 0.0;
  std::int64_t step = 0;
};

namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

}  // namespace

OptimizerBase::OptimizerBase(std::string kind, std::vector<ParamGroup> groups, Options options)
    : s_(std::make_unique<State>()) {
  s_->kind = std::move(kind);
  s_->state_names = std::move(options.state_names);
  s_->lr = options.lr;
  for (auto& g : groups) {
    if (g.names.size() != g.params.size())
      throw PluginError(
          s_->kind + ": a parameter group needs one name per tensor (" + std::to_string(g.names.size()) +
              " names, " + std::to_string(g.params.size()) + " tensors)",
          "", "the app or model plugin builds its parameter groups wrongly: report it to its author");
    for (size_t i = 0; i < g.params.size(); ++i) {
      OptimizerSlot s;
      s.name = g.names[i];
      s.param = g.params[i];
      for (const auto& nd : options.no_decay)
        if (s.name.find(nd) != std::string::npos) s.decay = false;
      s.weight_decay = g.weight_decay >= 0 ? g.weight_decay : options.weight_decay;
      for (size_t k = 0; k < s_->state_names.size(); ++k) s.state.push_back(torch::zeros_like(s.param));
      s_->slots.push_back(std::move(s));
    }
  }
}

OptimizerBase::~OptimizerBase() = default;

void OptimizerBase::zero_grad() {
  for (auto& s : s_->slots)
    if (s.param.grad().defined()) s.param.mutable_grad().zero_();
}

void OptimizerBase::set_lr(double lr) { s_->lr = lr; }
double OptimizerBase::lr() const { return s_->lr; }

std::map<std::string, at::Tensor> OptimizerBase::state() const {
  std::map<std::string, at::Tensor> out;
  out["step"] = torch::tensor(s_->step, torch::kLong);
  for (const auto& s : s_->slots)
    for (size_t k = 0; k < s_->state_names.size(); ++k) out[s_->state_names[k] + "." + s.name] = s.state[k];
  return out;
}

void OptimizerBase::load_state(const std::map<std::string, at::Tensor>& st) {
  const std::string hint = "resume with the model and optimizer settings the checkpoint was written with";
  auto get = [&](const std::string& key) -> const at::Tensor& {
    auto it = st.find(key);
    if (it == st.end() || !it->second.defined())
      throw DataError("optimizer state has no '" + key + "'", s_->kind, hint);
    return it->second;
  };
  const at::Tensor& step = get("step");
  if (step.numel() != 1) throw DataError("optimizer state 'step' is not a single number", s_->kind, hint);
  std::vector<const at::Tensor*> values;
  for (const auto& s : s_->slots)
    for (size_t k = 0; k < s_->state_names.size(); ++k) {
      const std::string key = s_->state_names[k] + "." + s.name;
      const at::Tensor& t = get(key);
      if (t.sizes() != s.param.sizes())
        throw DataError("optimizer state '" + key + "' has shape " + shape_text(t.sizes()) +
                            " but parameter '" + s.name + "' has shape " + shape_text(s.param.sizes()),
                        s_->kind, hint);
      values.push_back(&t);
    }
  torch::NoGradGuard no_grad;
  size_t i = 0;
  for (auto& s : s_->slots)
    for (auto& t : s.state) t.copy_(*values[i++]);
  s_->step = step.item<std::int64_t>();
}

std::vector<OptimizerSlot>& OptimizerBase::slots() { return s_->slots; }
const std::vector<OptimizerSlot>& OptimizerBase::slots() const { return s_->slots; }
const std::string& OptimizerBase::kind() const { return s_->kind; }
std::int64_t OptimizerBase::step_count() const { return s_->step; }
std::int64_t OptimizerBase::advance_step() { return ++s_->step; }

std::size_t OptimizerBase::decayed_count() const {
  std::size_t n = 0;
  for (const auto& s : s_->slots) n += s.decay;
  return n;
}

}  // namespace et::train
