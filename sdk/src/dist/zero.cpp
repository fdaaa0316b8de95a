// zero.cpp: ZeRO over the flattened parameter space. Every rank owns the contiguous slice
// [rank*S, (rank+1)*S) (S = ceil(P / world)) and runs the inner optimizer on views of that slice, one view
// per parameter it overlaps (so per-parameter rules such as "no weight decay on biases" still apply by name).
#include "ethost/dist/zero.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "ethost/error.h"
#include "ethost/log.h"

namespace et::dist {

ShardedOptimizer::~ShardedOptimizer() = default;

namespace {

struct Segment {
  size_t param;       // index into params
  int64_t param_off;  // offset inside the parameter (flattened)
  int64_t shard_off;  // offset inside this rank's shard
  int64_t len;
};

int64_t bytes_of(const at::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

class ZeroOptimizer final : public Optimizer, public ShardedOptimizer {
 public:
  ZeroOptimizer(std::vector<ParamGroup> groups, OptimizerFactory& inner, ProcessGroup& pg, int stage)
      : pg_(pg), stage_(stage) {
    if (stage < 1 || stage > 3)
      throw ConfigError("ZeRO stage must be 1, 2 or 3, got " + std::to_string(stage));
    for (auto& g : groups) {
      if (g.names.size() != g.params.size())
        throw PluginError(
            "ZeRO needs one name per parameter", "train.zero_stage",
            "the app or model plugin builds its parameter groups wrongly: report it to its author");
      for (size_t i = 0; i < g.params.size(); ++i) {
        names_.push_back(g.names[i]);
        params_.push_back(g.params[i]);
        shapes_.push_back(g.params[i].sizes().vec());
        offsets_.push_back(total_);
        total_ += g.params[i].numel();
        wd_.push_back(g.weight_decay);
      }
    }
    const int64_t n = pg.size(), r = pg.rank();
    shard_ = (total_ + n - 1) / n;
    lo_ = std::min(total_, r * shard_);
    hi_ = std::min(total_, lo_ + shard_);
    auto opts =
        params_.empty() ? torch::TensorOptions(torch::kFloat) : params_[0].options().requires_grad(false);
    master_ = torch::zeros({shard_}, opts);
    grads_ = torch::zeros({shard_}, opts);
    // Segments of this rank's slice, and the inner optimizer over views of them.
    ParamGroup inner_group;
    for (size_t i = 0; i < params_.size(); ++i) {
      int64_t a = std::max(lo_, offsets_[i]), b = std::min(hi_, offsets_[i] + params_[i].numel());
      if (a >= b) continue;
      Segment s{i, a - offsets_[i], a - lo_, b - a};
      segs_.push_back(s);
      {
        torch::NoGradGuard ng;
        master_.narrow(0, s.shard_off, s.len)
            .copy_(params_[i].detach().reshape({-1}).narrow(0, s.param_off, s.len));
      }
      at::Tensor view = master_.narrow(0, s.shard_off, s.len);
      view.mutable_grad() = grads_.narrow(0, s.shard_off, s.len);
      inner_group.names.push_back(names_[i]);
      inner_group.params.push_back(view);
      inner_group.weight_decay = wd_[i];
    }
    inner_ = inner.make({inner_group});
    if (stage_ == 3) release();
    log::get("dist").info("ZeRO stage ", stage_, ": ", total_, " parameters, this rank owns [", lo_, ", ",
                          hi_, ") in ", segs_.size(), " segments");
  }

  // ---------------------------------------------------------------------------------------------- Optimizer
  void step() override {
    torch::NoGradGuard ng;
    if (stage_ == 1) {
      // Gradients were all-reduced by data parallel: take this rank's slice.
      for (auto& s : segs_) {
        const at::Tensor& g = params_[s.param].grad();
        auto dst = grads_.narrow(0, s.shard_off, s.len);
        if (g.defined())
          dst.copy_(g.reshape({-1}).narrow(0, s.param_off, s.len));
        else
          dst.zero_();
      }
    }
    inner_->step();
    if (stage_ < 3) write_back_full();
  }

  void zero_grad() override {
    grads_.zero_();
    for (auto& p : params_)
      if (p.grad().defined()) {
        if (stage_ >= 2)
          p.mutable_grad() = at::Tensor();
        else
          p.mutable_grad().zero_();
      }
  }
  void set_lr(double lr) override { inner_->set_lr(lr); }
  double lr() const override { return inner_->lr(); }

  // Consolidated: per-parameter tensors under the inner optimizer's names, as if unsharded (any world size
  // can load it, and so can the plain inner optimizer).
  std::map<std::string, at::Tensor> state() const override {
    std::map<std::string, at::Tensor> shard_state = inner_->state(), out;
    std::map<std::string, at::Tensor> flat;  // prefix -> full flat buffer
    for (auto& [key, t] : shard_state) {
      auto [prefix, seg] = split_key(key);
      if (seg < 0) {
        out[key] = t;  // global entries (e.g. "step")
        continue;
      }
      auto& f = flat[prefix];
      if (!f.defined()) f = torch::zeros({total_}, t.options());
      const Segment& s = segs_[size_t(seg)];
      f.narrow(0, offsets_[s.param] + s.param_off, s.len).copy_(t.reshape({-1}));
    }
    // Every rank must take part in the same collectives: iterate prefixes in a fixed order known to all.
    for (auto& [prefix, f] : flat) {
      std::vector<at::Tensor> t{f};
      pg_.all_reduce(t);
      for (size_t i = 0; i < params_.size(); ++i)
        out[prefix + "." + names_[i]] = f.narrow(0, offsets_[i], numel(i)).view(shapes_[i]).clone();
    }
    return out;
  }

  void load_state(const std::map<std::string, at::Tensor>& full) override {
    std::map<std::string, at::Tensor> shard_state;
    std::map<std::string, at::Tensor> inner_now = inner_->state();
    for (auto& [key, t] : inner_now) {
      auto [prefix, seg] = split_key(key);
      if (seg < 0) {
        auto it = full.find(key);
        if (it == full.end()) throw DataError("optimizer state has no '" + key + "'");
        shard_state[key] = it->second;
        continue;
      }
      const Segment& s = segs_[size_t(seg)];
      auto it = full.find(prefix + "." + names_[s.param]);
      if (it == full.end())
        throw DataError("optimizer state has no '" + prefix + "." + names_[s.param] + "'");
      shard_state[key] = it->second.reshape({-1}).narrow(0, s.param_off, s.len).clone();
    }
    inner_->load_state(shard_state);
  }

  std::string describe() const override {
    std::ostringstream os;
    os << "zero(stage=" << stage_ << ", ranks=" << pg_.size() << ") over " << inner_->describe();
    return os.str();
  }

  void* query_interface(std::string_view id) override {
    if (void* p = offer<ShardedOptimizer>(this, id)) return p;
    return Optimizer::query_interface(id);
  }

  // --------------------------------------------------------------------------------------- ShardedOptimizer
  int stage() const override { return stage_; }

  void materialize() override {
    if (stage_ < 3 || materialized_) return;
    torch::NoGradGuard ng;
    at::Tensor full = gather_flat();
    for (size_t i = 0; i < params_.size(); ++i)
      params_[i].set_data(full.narrow(0, offsets_[i], numel(i)).view(shapes_[i]));
    materialized_ = true;
  }

  void release() override {
    if (stage_ < 3) return;
    torch::NoGradGuard ng;
    for (auto& p : params_) p.set_data(torch::empty({0}, p.options()));
    materialized_ = false;
  }

  void reduce_gradients() override {
    if (stage_ < 2) return;
    torch::NoGradGuard ng;
    const int64_t n = pg_.size();
    at::Tensor flat = torch::zeros({shard_ * n}, master_.options());
    for (size_t i = 0; i < params_.size(); ++i) {
      const at::Tensor& g = params_[i].grad();
      if (g.defined()) flat.narrow(0, offsets_[i], numel(i)).copy_(g.reshape({-1}));
    }
    pg_.reduce_scatter(grads_, flat);
    for (auto& p : params_) p.mutable_grad() = at::Tensor();  // only the shard's gradients stay
    if (stage_ == 3) release();
  }

  double clip_grad_norm(double max_norm) override {
    torch::NoGradGuard ng;
    double sq = 0;
    if (stage_ >= 2) {
      sq = pg_.all_reduce_scalar(grads_.pow(2).sum().item<double>());
    } else {
      for (auto& p : params_)
        if (p.grad().defined()) sq += p.grad().pow(2).sum().item<double>();
    }
    double norm = std::sqrt(sq);
    if (max_norm > 0 && norm > max_norm) {
      double f = max_norm / (norm + 1e-6);
      if (stage_ >= 2)
        grads_.mul_(f);
      else
        for (auto& p : params_)
          if (p.grad().defined()) p.mutable_grad().mul_(f);
    }
    return norm;
  }

  HeldBytes held_bytes() const override {
    HeldBytes h;
    int64_t full_param_bytes = 0, full_grad_bytes = 0;
    for (size_t i = 0; i < params_.size(); ++i) {
      full_param_bytes += numel(i) * static_cast<int64_t>(master_.element_size());
      full_grad_bytes += bytes_of(params_[i].grad());
    }
    for (auto& [k, t] : inner_->state()) h.optimizer_state += bytes_of(t);
    const int64_t owned = hi_ - lo_;
    h.unsharded_optimizer_state = owned > 0 ? h.optimizer_state * total_ / owned : 0;
    h.unsharded_gradients = full_param_bytes;
    h.unsharded_parameters = full_param_bytes;
    // Gradients held: the full .grad tensors still alive plus this rank's reduced shard (stages 2-3).
    h.gradients = full_grad_bytes + (stage_ >= 2 ? bytes_of(grads_) : 0);
    // Parameters held: the full tensors unless released (stage 3), plus the master shard.
    h.parameters = (stage_ == 3 && !materialized_ ? 0 : full_param_bytes) + bytes_of(master_);
    return h;
  }

 private:
  int64_t numel(size_t i) const {
    int64_t n = 1;
    for (auto d : shapes_[i]) n *= d;
    return n;
  }

  // "exp_avg.encoder.layer.0.weight" -> ("exp_avg", segment index of that parameter), or (key, -1).
  std::pair<std::string, int> split_key(const std::string& key) const {
    // Inner optimizers name per-parameter state "<prefix>.<parameter name>" with a dot-free prefix.
    auto dot = key.find('.');
    if (dot == std::string::npos) return {key, -1};
    std::string prefix = key.substr(0, dot), name = key.substr(dot + 1);
    for (size_t k = 0; k < segs_.size(); ++k)
      if (names_[segs_[k].param] == name) return {prefix, static_cast<int>(k)};
    return {key, -1};
  }

  at::Tensor gather_flat() {
    const int64_t n = pg_.size();
    std::vector<at::Tensor> parts;
    at::Tensor full = torch::empty({shard_ * n}, master_.options());
    for (int64_t r = 0; r < n; ++r) parts.push_back(full.narrow(0, r * shard_, shard_));
    pg_.all_gather(parts, master_);
    return full;
  }

  void write_back_full() {
    at::Tensor full = gather_flat();
    for (size_t i = 0; i < params_.size(); ++i)
      params_[i].detach().view({-1}).copy_(full.narrow(0, offsets_[i], numel(i)));
  }

  ProcessGroup& pg_;
  int stage_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<int64_t> offsets_;
  std::vector<double> wd_;
  int64_t total_ = 0, shard_ = 0, lo_ = 0, hi_ = 0;
  at::Tensor master_, grads_;
  std::vector<Segment> segs_;
  std::unique_ptr<Optimizer> inner_;
  bool materialized_ = true;
};

}  // namespace

std::unique_ptr<Optimizer> make_zero_optimizer(std::vector<ParamGroup> groups, OptimizerFactory& inner,
                                               ProcessGroup& pg, int stage) {
  return std::make_unique<ZeroOptimizer>(std::move(groups), inner, pg, stage);
}

}  // namespace et::dist
