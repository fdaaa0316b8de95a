// fused_ops.cpp: autograd Functions over the fused CPU kernels — what each saves for backward, and when the
// plain ATen path must be used instead.
#include "ethost/nn/fused_ops.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>

#include "ethost/error.h"
#include "ethost/kernels/batched_gemm.h"
#include "ethost/kernels/fused_gelu.h"
#include "ethost/kernels/fused_layer_norm.h"
#include "ethost/kernels/fused_softmax.h"

namespace et::nn::fused {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

uint64_t draw_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
}

namespace {

bool usable(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble) &&
         t.layout() == at::kStrided;
}
bool same_type(const at::Tensor& a, const at::Tensor& b) {
  return !b.defined() || (usable(b) && b.scalar_type() == a.scalar_type());
}

template <typename T>
T* ptr(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// Runs f<float> or f<double> by the tensor's dtype.
template <typename F>
void by_type(const at::Tensor& t, F&& f) {
  if (t.scalar_type() == at::kFloat)
    f(float{});
  else
    f(double{});
}

at::Tensor contig(const at::Tensor& t) { return t.defined() ? t.contiguous() : t; }

// LibTorch 1.13's Function::apply rejects undefined inputs: an absent optional tensor travels as a 0-element
// placeholder and is undefined again inside forward.
at::Tensor placeholder(const at::Tensor& t, const at::TensorOptions& like) {
  return t.defined() ? t : at::empty({0}, like);
}
at::Tensor present(const at::Tensor& t) { return t.numel() > 0 ? t.contiguous() : at::Tensor(); }

// The backwards below are computed by raw kernels, not by differentiable ops: a second derivative through
// them would silently be missing terms, so create_graph refuses instead.
void no_double_backward(const char* op) {
  if (torch::GradMode::is_enabled())
    throw ConfigError(std::string("fused kernel ") + op + " has no double backward (create_graph = true)", "",
                      "set fused_kernels = false in the model config for higher-order gradients");
}

// --- bias + GELU ---
struct BiasGeluFn : public torch::autograd::Function<BiasGeluFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& b_in) {
    at::Tensor x = x_in.contiguous(), b = present(b_in);
    at::Tensor y = at::empty_like(x);
    const int64_t cols = x.size(-1), rows = cols ? x.numel() / cols : 0;
    by_type(x, [&](auto tag) {
      using T = decltype(tag);
      kernels::bias_gelu_forward(ptr<T>(x), ptr<T>(b), ptr<T>(y), rows, cols);
    });
    ctx->save_for_backward({x, b});
    ctx->saved_data["has_bias"] = b.defined();
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    no_double_backward("BiasGelu");
    auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    at::Tensor b = ctx->saved_data["has_bias"].toBool() ? saved[1] : at::Tensor();
    at::Tensor dy = grads[0].contiguous(), dx = at::empty_like(x);
    at::Tensor db = b.defined() ? at::empty_like(b) : at::Tensor();
    const int64_t cols = x.size(-1), rows = cols ? x.numel() / cols : 0;
    by_type(x, [&](auto tag) {
      using T = decltype(tag);
      kernels::bias_gelu_backward(ptr<T>(dy), ptr<T>(x), ptr<T>(b), ptr<T>(dx), ptr<T>(db), rows, cols);
    });
    return {dx, db};
  }
};

// --- dropout + residual + LayerNorm ---
struct AddLayerNormFn : public torch::autograd::Function<AddLayerNormFn> {
  // for_backward: false when no gradient will be asked for (inference): the sum s is then not kept.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& r_in,
                            const at::Tensor& w_in, const at::Tensor& b_in, double eps, double p,
                            bool for_backward) {
    at::Tensor x = x_in.contiguous(), r = present(r_in), w = w_in.contiguous(), b = b_in.contiguous();
    const int64_t cols = x.size(-1), rows = cols ? x.numel() / cols : 0;
    const uint64_t seed = p > 0.0 ? draw_seed() : 0;
    at::Tensor y = at::empty_like(x), s = for_backward ? at::empty_like(x) : at::Tensor(),
               mean = at::empty({rows}, x.options()), rstd = at::empty({rows}, x.options());
    by_type(x, [&](auto tag) {
      using T = decltype(tag);
      kernels::add_layer_norm_forward(ptr<T>(x), ptr<T>(r), ptr<T>(w), ptr<T>(b), ptr<T>(y), ptr<T>(s),
                                      ptr<T>(mean), ptr<T>(rstd), rows, cols, eps, p, seed);
    });
    ctx->save_for_backward({s, mean, rstd, w});
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["has_residual"] = r.defined();
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    no_double_backward("AddLayerNorm");
    auto saved = ctx->get_saved_variables();
    const at::Tensor &s = saved[0], &mean = saved[1], &rstd = saved[2], &w = saved[3];
    const double p = ctx->saved_data["p"].toDouble();
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    const int64_t cols = s.size(-1), rows = cols ? s.numel() / cols : 0;
    at::Tensor dy = grads[0].contiguous(), ds = at::empty_like(s), dx = p > 0.0 ? at::empty_like(s) : ds;
    at::Tensor dw = at::empty_like(w), db = at::empty_like(w);
    by_type(s, [&](auto tag) {
      using T = decltype(tag);
      kernels::add_layer_norm_backward(ptr<T>(dy), ptr<T>(s), ptr<T>(mean), ptr<T>(rstd), ptr<T>(w),
                                       ptr<T>(ds), p > 0.0 ? ptr<T>(dx) : nullptr, ptr<T>(dw), ptr<T>(db),
                                       rows, cols, p, seed);
    });
    return {dx,           ctx->saved_data["has_residual"].toBool() ? ds : at::Tensor(),
            dw,           db,
            at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

// --- embedding sum + LayerNorm ---
struct EmbeddingLayerNormFn : public torch::autograd::Function<EmbeddingLayerNormFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& word, const at::Tensor& type,
                            const at::Tensor& pos, const at::Tensor& w_in, const at::Tensor& b_in,
                            const at::Tensor& ids, const at::Tensor& types_in, const at::Tensor& positions_in,
                            double eps, int64_t word_pad, int64_t pos_pad, bool for_backward) {
    at::Tensor wc = word.contiguous(), tc = present(type), pc = present(pos), w = w_in.contiguous(),
               b = b_in.contiguous();
    const at::Tensor types = present(types_in), positions = present(positions_in);
    const int64_t cols = wc.size(1), tokens = ids.numel();
    std::vector<int64_t> shape = ids.sizes().vec();
    shape.push_back(cols);
    at::Tensor y = at::empty(shape, wc.options()),
               s = for_backward ? at::empty(shape, wc.options()) : at::Tensor(),
               mean = at::empty({tokens}, wc.options()), rstd = at::empty({tokens}, wc.options());
    by_type(wc, [&](auto tag) {
      using T = decltype(tag);
      kernels::embedding_layer_norm_forward(
          ptr<int64_t>(ids), ptr<int64_t>(types), ptr<int64_t>(positions), ptr<T>(wc), ptr<T>(tc), ptr<T>(pc),
          ptr<T>(w), ptr<T>(b), ptr<T>(y), ptr<T>(s), ptr<T>(mean), ptr<T>(rstd), tokens, cols, eps);
    });
    ctx->save_for_backward({s, mean, rstd, w, ids, types_in, positions_in});
    ctx->saved_data["has_types"] = types.defined();
    ctx->saved_data["has_positions"] = positions.defined();
    ctx->saved_data["word_rows"] = word.size(0);
    ctx->saved_data["type_rows"] = tc.defined() ? type.size(0) : int64_t{0};
    ctx->saved_data["pos_rows"] = pc.defined() ? pos.size(0) : int64_t{0};
    ctx->saved_data["word_pad"] = word_pad;
    ctx->saved_data["pos_pad"] = pos_pad;
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    no_double_backward("EmbeddingLayerNorm");
    auto saved = ctx->get_saved_variables();
    const at::Tensor &s = saved[0], &mean = saved[1], &rstd = saved[2], &w = saved[3], &ids = saved[4];
    at::Tensor types = ctx->saved_data["has_types"].toBool() ? saved[5] : at::Tensor();
    at::Tensor positions = ctx->saved_data["has_positions"].toBool() ? saved[6] : at::Tensor();
    const int64_t cols = s.size(-1), tokens = ids.numel();
    at::Tensor dy = grads[0].contiguous(), ds = at::empty_like(s), dw = at::empty_like(w),
               db = at::empty_like(w);
    auto table_grad = [&](int input, const at::Tensor& idx, int64_t rows, int64_t pad) {
      if (!idx.defined() || rows == 0 || !ctx->needs_input_grad(static_cast<size_t>(input)))
        return at::Tensor();
      at::Tensor g = at::zeros({rows, cols}, s.options());
      by_type(s, [&](auto tag) {
        using T = decltype(tag);
        kernels::embedding_scatter_add(ptr<int64_t>(idx), ptr<T>(ds), ptr<T>(g), tokens, cols, pad);
      });
      return g;
    };
    by_type(s, [&](auto tag) {
      using T = decltype(tag);
      kernels::add_layer_norm_backward(ptr<T>(dy), ptr<T>(s), ptr<T>(mean), ptr<T>(rstd), ptr<T>(w),
                                       ptr<T>(ds), nullptr, ptr<T>(dw), ptr<T>(db), tokens, cols, 0.0, 0);
    });
    return {table_grad(0, ids, ctx->saved_data["word_rows"].toInt(), ctx->saved_data["word_pad"].toInt()),
            table_grad(1, types, ctx->saved_data["type_rows"].toInt(), -1),
            table_grad(2, positions, ctx->saved_data["pos_rows"].toInt(), ctx->saved_data["pos_pad"].toInt()),
            dw,
            db,
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

// --- scale + mask + softmax + dropout ---
struct AttentionSoftmaxFn : public torch::autograd::Function<AttentionSoftmaxFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& scores_in, const at::Tensor& mask_in,
                            double scale, double p) {
    at::Tensor scores = scores_in.contiguous(), mask = present(mask_in);
    const int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2), Tk = scores.size(3);
    const uint64_t seed = p > 0.0 ? draw_seed() : 0;
    at::Tensor probs = at::empty_like(scores), out = p > 0.0 ? at::empty_like(scores) : probs;
    by_type(scores, [&](auto tag) {
      using T = decltype(tag);
      kernels::attention_softmax_forward(ptr<T>(scores), ptr<T>(mask), ptr<T>(probs),
                                         p > 0.0 ? ptr<T>(out) : nullptr, B, H, Tq, Tk, scale, p, seed);
    });
    ctx->save_for_backward({probs});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    no_double_backward("AttentionSoftmax");
    const at::Tensor probs = ctx->get_saved_variables()[0];
    const int64_t B = probs.size(0), H = probs.size(1), Tq = probs.size(2), Tk = probs.size(3);
    at::Tensor dy = grads[0].contiguous(), ds = at::empty_like(probs);
    by_type(probs, [&](auto tag) {
      using T = decltype(tag);
      kernels::attention_softmax_backward(
          ptr<T>(dy), ptr<T>(probs), ptr<T>(ds), B, H, Tq, Tk, ctx->saved_data["scale"].toDouble(),
          ctx->saved_data["p"].toDouble(), static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
    });
    return {ds, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// --- batched strided GEMM ---
template <typename T>
kernels::MatrixBatch<T> view_of(const at::Tensor& t) {
  return {t.data_ptr<std::remove_const_t<T>>(), t.stride(0), t.stride(1), t.stride(2), t.stride(3)};
}

// c = a @ b into the preallocated c (4-D); c's last or second-to-last dimension must be unit-stride.
void gemm_into(const at::Tensor& a, const at::Tensor& b, at::Tensor& c) {
  if (c.stride(3) != 1 && c.stride(2) == 1) {  // c column-major: c^T = b^T a^T is row-major
    at::Tensor ct = c.transpose(2, 3);
    gemm_into(b.transpose(2, 3), a.transpose(2, 3), ct);
    return;
  }
  bool done = false;
  if (c.stride(3) == 1) {
    by_type(c, [&](auto tag) {
      using T = decltype(tag);
      done = kernels::batched_gemm(c.size(0), c.size(1), c.size(2), c.size(3), a.size(3), T(1),
                                   view_of<const T>(a), view_of<const T>(b), T(0), view_of<T>(c));
    });
  }
  if (!done) c.copy_(at::matmul(a, b));
}

// An empty tensor shaped and laid out like t when t is a dense permutation, else contiguous.
at::Tensor empty_like_layout(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense() ? at::empty_strided(t.sizes(), t.strides(), t.options())
                                          : at::empty_like(t, at::MemoryFormat::Contiguous);
}

struct AttentionMatmulFn : public torch::autograd::Function<AttentionMatmulFn> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            bool heads_inner) {
    const int64_t B0 = a.size(0), B1 = a.size(1), M = a.size(2), N = b.size(3);
    at::Tensor c = heads_inner ? at::empty({B0, M, B1, N}, a.options()).transpose(1, 2)
                               : at::empty({B0, B1, M, N}, a.options());
    gemm_into(a, b, c);
    ctx->save_for_backward({a, b});
    return c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    no_double_backward("AttentionMatmul");
    auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1];
    at::Tensor g = grads[0];
    if (g.stride(3) != 1 && g.stride(2) != 1) g = g.contiguous();
    at::Tensor da, db;
    if (ctx->needs_input_grad(0)) {
      da = empty_like_layout(a);
      gemm_into(g, b.transpose(2, 3), da);
    }
    if (ctx->needs_input_grad(1)) {
      db = empty_like_layout(b);
      gemm_into(a.transpose(2, 3), g, db);
    }
    return {da, db, at::Tensor()};
  }
};

bool gemm_operand(const at::Tensor& t) { return t.stride(3) == 1 || t.stride(2) == 1; }

void check_ids(const at::Tensor& idx, int64_t rows, const char* what) {
  if (!idx.defined() || idx.numel() == 0) return;
  auto [lo, hi] = at::aminmax(idx);
  const int64_t l = lo.item<int64_t>(), h = hi.item<int64_t>();
  if (l < 0 || h >= rows)
    throw DataError(std::string(what) + " out of range: found " + std::to_string(l < 0 ? l : h) +
                        ", table has " + std::to_string(rows) + " rows",
                    "",
                    "check the vocabulary / type_vocab_size / max_position_embeddings against the inputs");
}

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!bias.defined() || x.dim() < 2)
    return bias.defined() ? at::linear(x, weight, bias) : at::matmul(x, weight.t());
  auto sizes = x.sizes().vec();
  at::Tensor out = at::addmm(bias, x.reshape({-1, sizes.back()}), weight.t());
  sizes.back() = weight.size(0);
  return out.view(sizes);
}

at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias) {
  if (!usable(x) || x.dim() < 1 || !same_type(x, bias)) return {};
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != x.size(-1))) return {};
  return BiasGeluFn::apply(x, placeholder(bias, x.options()));
}

at::Tensor add_layer_norm(const at::Tensor& x, const at::Tensor& residual, const at::Tensor& weight,
                          const at::Tensor& bias, double eps, double p, bool training) {
  if (!usable(x) || x.dim() < 1 || !same_type(x, residual) || !same_type(x, weight) || !same_type(x, bias))
    return {};
  if (residual.defined() && residual.sizes() != x.sizes()) return {};
  if (!weight.defined() || !bias.defined() || weight.numel() != x.size(-1) || bias.numel() != x.size(-1))
    return {};
  const bool for_backward = torch::GradMode::is_enabled() &&
                            (x.requires_grad() || (residual.defined() && residual.requires_grad()) ||
                             weight.requires_grad() || bias.requires_grad());
  return AddLayerNormFn::apply(x, placeholder(residual, x.options()), weight, bias, eps, training ? p : 0.0,
                               for_backward);
}

at::Tensor embedding_layer_norm(const at::Tensor& ids, const at::Tensor& types, const at::Tensor& positions,
                                const at::Tensor& word, const at::Tensor& type, const at::Tensor& pos,
                                const at::Tensor& weight, const at::Tensor& bias, double eps,
                                int64_t word_padding_idx, int64_t pos_padding_idx) {
  if (!usable(word) || !same_type(word, type) || !same_type(word, pos) || !same_type(word, weight) ||
      !same_type(word, bias))
    return {};
  auto long_like = [&](const at::Tensor& t) {
    return !t.defined() || (t.is_cpu() && t.scalar_type() == at::kLong && t.sizes() == ids.sizes());
  };
  if (!ids.defined() || !ids.is_cpu() || ids.scalar_type() != at::kLong || !long_like(types) ||
      !long_like(positions))
    return {};
  if (types.defined() != type.defined() || positions.defined() != pos.defined()) return {};
  const int64_t cols = word.dim() == 2 ? word.size(1) : -1;
  auto table_ok = [&](const at::Tensor& t) { return !t.defined() || (t.dim() == 2 && t.size(1) == cols); };
  if (cols < 0 || !table_ok(type) || !table_ok(pos) || !weight.defined() || !bias.defined() ||
      weight.numel() != cols || bias.numel() != cols)
    return {};
  check_ids(ids, word.size(0), "input_ids");
  if (types.defined()) check_ids(types, type.size(0), "token_type_ids");
  if (positions.defined()) check_ids(positions, pos.size(0), "position_ids");
  const auto longs = ids.options();
  return EmbeddingLayerNormFn::apply(word, placeholder(type, word.options()),
                                     placeholder(pos, word.options()), weight, bias, ids.contiguous(),
                                     placeholder(contig(types), longs), placeholder(contig(positions), longs),
                                     eps, word_padding_idx, pos_padding_idx, torch::GradMode::is_enabled());
}

at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b, bool heads_inner) {
  if (!usable(a) || !same_type(a, b) || !b.defined() || a.dim() != 4 || b.dim() != 4) return {};
  if (a.size(0) != b.size(0) || a.size(1) != b.size(1) || a.size(3) != b.size(2)) return {};
  if (a.numel() == 0 || b.numel() == 0) return {};
  if (!gemm_operand(a) || !gemm_operand(b)) return {};
  return AttentionMatmulFn::apply(a, b, heads_inner);
}

at::Tensor attention_softmax(const at::Tensor& scores, const at::Tensor& mask, double scale, double p,
                             bool training) {
  if (!usable(scores) || scores.dim() != 4 || !same_type(scores, mask)) return {};
  if (mask.defined() && mask.requires_grad()) return {};  // the fused backward gives the mask no gradient
  at::Tensor m;
  if (mask.defined()) {
    // Only a key mask [B, 1, 1, Tk] (HF's extended mask) is fused; anything else runs the ATen path.
    if (mask.dim() != 4 || mask.size(0) != scores.size(0) || mask.size(1) != 1 || mask.size(2) != 1 ||
        mask.size(3) != scores.size(3))
      return {};
    m = mask.reshape({scores.size(0), scores.size(3)}).contiguous();
  }
  return AttentionSoftmaxFn::apply(scores, placeholder(m, scores.options()), scale, training ? p : 0.0);
}

}  // namespace et::nn::fused
