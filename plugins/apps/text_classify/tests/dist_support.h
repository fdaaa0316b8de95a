// dist_support.h: helpers shared by the multi-process and multi-node tests — the tiny deterministic
// text_classify config, runs through the launcher, loss curves, weight comparison and process inspection.
#pragma once

#include <torch/torch.h>

#include <doctest/doctest.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ethost/io/safetensors.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace et::test::dist {

using et::test::contains;
using et::test::read_jsonl;
using et::test::write_file;

inline const std::string kRepo = ETHOST_SOURCE_DIR;

// A tiny BERT classifier on the bundled EPRSTMT data with dropout off (so runs are deterministic functions of
// the global batch); every step logged.
inline std::string dist_config(const std::string& ckpt, const std::string& extra = {}) {
  return "[data]\ntables = [\"" + kRepo + "/data/eprstmt/train.tsv\", \"" + kRepo +
         "/data/eprstmt/dev.tsv\"]\ninput_schema = \"text:str:1,label:str:1\"\n"
         "label_enumerate_values = [\"Negative\", \"Positive\"]\nsequence_length = 32\nvocab_file = \"" +
         kRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\nhidden_dropout_prob = 0.0\nattention_probs_dropout_prob = 0.0\n"
         "[optimizer]\nlearning_rate = 1e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt +
         "\"\nlogging_steps = 1\nprogress_bar = \"never\"\nmax_steps = 6\n"
         "tensorboard = false\n" +
         extra;
}

struct RunOut {
  et::test::ProcResult r;
  std::vector<double> losses;  // per step
  std::vector<nlohmann::json> events;
};

// Runs text_classify training with `nproc` workers (0: no launcher) and the given --set overrides.
// Reads a run's metrics.jsonl (if any) into o.events and o.losses.
inline void read_metrics(RunOut& o, const std::string& ckpt_dir) {
  if (std::filesystem::exists(ckpt_dir + "/metrics.jsonl"))
    o.events = read_jsonl(ckpt_dir + "/metrics.jsonl");
  for (auto& e : o.events)
    if (e["event"] == "train") o.losses.push_back(e["loss"].get<double>());
}

inline RunOut train(const et::test::TempDir& dir, const std::string& name, int nproc,
                    std::vector<std::string> sets, const std::string& extra_toml = {}) {
  write_file(dir / (name + ".toml"), dist_config(dir / name, extra_toml));
  std::vector<std::string> args;
  if (nproc > 0) args = {"--nproc_per_node", std::to_string(nproc)};
  for (const char* a :
       {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify", "--config"})
    args.push_back(a);
  args.push_back(dir / (name + ".toml"));
  if (nproc == 0) args.insert(args.end(), {"--threads", "1"});
  for (auto& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  RunOut o;
  o.r = et::test::run_ethost(args, {}, {}, 300);
  read_metrics(o, dir / name);
  return o;
}

inline std::string tail(const std::string& s, size_t n = 3000) {
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// Largest |a-b| over the tensors of two safetensors files (which must have the same keys).
inline double max_weight_diff(const std::string& a, const std::string& b) {
  auto x = et::io::read_safetensors(a), y = et::io::read_safetensors(b);
  REQUIRE(x.size() == y.size());
  double d = 0;
  for (auto& [k, t] : x) {
    REQUIRE(y.contains(k));
    d = std::max(d, (t.to(torch::kDouble) - y.at(k).to(torch::kDouble)).abs().max().item<double>());
  }
  return d;
}

inline void check_same_curve(const RunOut& a, const RunOut& b, double tol) {
  REQUIRE(a.losses.size() == b.losses.size());
  REQUIRE(!a.losses.empty());
  for (size_t i = 0; i < a.losses.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(a.losses[i] - b.losses[i]) <= tol);
  }
}

inline nlohmann::json last_event(const RunOut& o, const std::string& kind) {
  for (auto it = o.events.rbegin(); it != o.events.rend(); ++it)
    if ((*it)["event"] == kind) return *it;
  return {};
}

inline std::vector<int> children_of(int pid) {
  std::vector<int> out;
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string n = e.path().filename().string();
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream ss(stat.substr(close + 2));
    char state;
    int ppid = 0;
    ss >> state >> ppid;
    if (ppid == pid) out.push_back(std::stoi(n));
  }
  return out;
}

inline bool alive(int pid) { return kill(pid, 0) == 0; }

}  // namespace et::test::dist
