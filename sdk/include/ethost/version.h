// version.h: SDK ABI version constants and the one rule that decides whether a plugin is compatible.
#pragma once

#include <cstdint>
#include <string>

#include "ethost/export.h"

// ABI policy (see sdk/README.md and docs/plugins.md): this version covers the plugin contract only — the
// top-level headers and data/, text/, io/, dist/, train/. scripts/abi-check.sh (ctest abi.contract) compares
// their layout with sdk/abi/contract.abi.xz and fails on a change without a bump. The nn toolkit, the app
// bases and the kernels are versioned apart (ethost/toolkit_version.h).
//  - MAJOR changes on any layout/vtable change of an existing SDK interface, or a new LibTorch minor.
//    Every plugin must then be rebuilt; the entry symbol name (ethost_plugin_v<MAJOR>) changes with it.
//  - MINOR changes on additive changes only (new kinds, new Context services, new capability interfaces).
//  - 3.0: the contract and the toolkit are two libraries (libethost_sdk.so.3, libethost_toolkit.so.1); the
//    default Model::load, et::memory and load_weights (now et::io::load_weights, ethost/io/load_weights.h;
//    the nn names remain as aliases) moved into the contract. Plugins using nn/ or app/ link ethost::toolkit.
//    Also: config key types path, path_list and list_or_file (manifests and services),
//    ConfigView::source_file and et::resolve_config_paths: relative paths in a config file resolve against
//    its folder.
//  - 2.6: ethost/nn/distill_losses.h (kd_kl_loss, vanilla_kd_loss, masked_mse, uniform_layer_map) and the
//    supervised service's [distill] keys: knowledge distillation in every supervised app (SupervisedApp's
//    layout and vtable are unchanged: the teacher and the KD task live behind its pimpl).
//  - 2.5: rows that make several examples — data::build_windowed_dataset / stream_windowed_dataset,
//    pack_windows / unpack_windows, SupervisedApp::set_window_encoder (a non-virtual registration, so
//    SupervisedApp's vtable is unchanged) — and predict outputs as one JSON object (.json).
//  - 2.4: the sentence_embedding head (pooling cls/mean/max/pooler, optional "projection" to
//    embedding_size; ModelOptions::pooling/embedding_size, TaskHeads::projection), nn::pool_tokens, and
//    ethost/nn/embedding_losses.h (in-batch softmax, cosine margin, cosine hinge, circle loss),
//    app::set_bert_text (ethost/app/text_features.h), SupervisedApp::saved_model_dir, predict outputs as
//    .jsonl and .npy.
//  - 2.3: the crf head (nn::Crf, nn::gather_positions; TaskHeads::crf, "token_tags" output). TaskHeads
//    grew a member: model plugins that hold one are rebuilt with the SDK (the nn toolkit is source-stable).
//  - 2.2: data::whole_word_ids over a token list, the MLM head's "mlm_positions" input (decoder on the
//    chosen positions only), manifest aliases.
//  - 2.1: et::DistError (exit code 5), ProcessGroup::create(env, GroupOptions), ethost/dist/net.h,
//    et::text::Segmenter, ethost/data/mlm_masking.h.
//  - 2.0 (SDK 2): components derive from et::Component (capability lookup), open data features, the Predictor
//    capability, the supervised-app base, the HF model toolkit and the trainer's hooks.
//  - A plugin is compatible when: same MAJOR, plugin MINOR <= host MINOR, same LibTorch major.minor,
//    same _GLIBCXX_USE_CXX11_ABI.
#define ET_SDK_ABI_MAJOR 3
#define ET_SDK_ABI_MINOR 0
#define ET_VERSION_STRING "0.1.0"

namespace et {

struct AbiStamp {
  int abi_major = 0;
  int abi_minor = 0;
  int torch_major = 0;
  int torch_minor = 0;
  int cxx11_abi = -1;  // -1: unknown
};

// The stamp the host (and the SDK library) was built with.
ET_API AbiStamp host_abi_stamp();

// Returns an empty string when `plugin` may be loaded by a host with `host`, else a one-line reason.
inline std::string abi_incompatibility(const AbiStamp& plugin, const AbiStamp& host) {
  auto ver = [](int a, int b) { return std::to_string(a) + "." + std::to_string(b); };
  if (plugin.abi_major != host.abi_major || plugin.abi_minor > host.abi_minor)
    return "built for SDK ABI " + ver(plugin.abi_major, plugin.abi_minor) + ", host supports " +
           (host.abi_minor == 0
                ? ver(host.abi_major, 0)
                : ver(host.abi_major, 0) + "\xE2\x80\x93" + ver(host.abi_major, host.abi_minor)) +
           ": rebuild the plugin against this host's SDK";
  if (plugin.torch_major != host.torch_major || plugin.torch_minor != host.torch_minor)
    return "built for LibTorch " + ver(plugin.torch_major, plugin.torch_minor) + ", host has " +
           ver(host.torch_major, host.torch_minor) + ": rebuild the plugin against this LibTorch";
  if (plugin.cxx11_abi >= 0 && host.cxx11_abi >= 0 && plugin.cxx11_abi != host.cxx11_abi)
    return "built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(plugin.cxx11_abi) + ", host uses " +
           std::to_string(host.cxx11_abi) + ": rebuild with the host's setting";
  return {};
}

}  // namespace et
