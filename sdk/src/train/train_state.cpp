// train_state.cpp: checkpoint-<step>/ writing, reading, resolution and pruning.
#include "train_state.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/io/state_dict.h"

namespace fs = std::filesystem;

namespace et::train {
namespace {

int64_t step_of(const fs::path& p) {
  std::string n = p.filename().string();
  if (n.rfind("checkpoint-", 0) != 0) return -1;
  try {
    size_t pos = 0;
    int64_t s = std::stoll(n.substr(11), &pos);
    return pos == n.size() - 11 ? s : -1;
  } catch (...) {
    return -1;
  }
}

std::vector<std::pair<int64_t, fs::path>> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, fs::path>> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    int64_t s = step_of(e.path());
    if (s >= 0 && e.is_directory() && fs::exists(e.path() / "train_state" / "trainer_state.json"))
      out.emplace_back(s, e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string save_checkpoint(const std::string& checkpoint_dir, const TrainState& st, TrainTask& task,
                            const std::map<std::string, at::Tensor>& optimizer_state) {
  std::string final_dir = checkpoint_dir + "/checkpoint-" + std::to_string(st.global_step);
  io::AtomicDir out(final_dir);
  task.save_model(out.tmp_path());
  fs::create_directories(out.path("train_state"));
  io::write_safetensors(out.path("train_state/optimizer.safetensors"), io::StateDict(optimizer_state), {});
  auto gen = at::detail::getDefaultCPUGenerator();
  at::Tensor rng;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    rng = gen.get_state();
  }
  io::write_safetensors(out.path("train_state/rng.safetensors"), io::StateDict{{"torch_cpu", rng}}, {});
  nlohmann::json j = {
      {"global_step", st.global_step},       {"epoch", st.epoch},
      {"batch_in_epoch", st.batch_in_epoch}, {"total_steps", st.total_steps},
      {"warmup_steps", st.warmup_steps},     {"base_lr", st.base_lr},
      {"lr_schedule", st.lr_schedule},       {"best_metric", st.best_metric},
      {"best_step", st.best_step},           {"samples_seen", st.samples_seen},
      {"world_size", st.world_size},         {"loss_windows", st.loss_windows},
      {"loss_scale", st.loss_scale},         {"loss_scale_good_steps", st.loss_scale_good_steps},
      {"data_cursor", st.data_cursor}};
  if (auto it = st.loss_windows.find("loss"); it != st.loss_windows.end()) j["loss_window"] = it->second;
  io::write_file_atomic(out.path("train_state/trainer_state.json"), j.dump(2) + "\n");
  out.commit();
  return final_dir;
}

TrainState load_checkpoint_state(const std::string& dir, Optimizer& optimizer) {
  std::string state_file = dir + "/train_state/trainer_state.json";
  std::ifstream in(state_file);
  if (!in)
    throw DataError("not a resumable checkpoint (no train_state/trainer_state.json)", dir,
                    "resume from a checkpoint-<step> directory written by `ethost --mode train`");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw DataError(std::string("corrupt trainer_state.json: ") + e.what(), state_file);
  }
  TrainState st;
  try {
    st.global_step = j.at("global_step");
    st.epoch = j.at("epoch");
    st.batch_in_epoch = j.at("batch_in_epoch");
    st.total_steps = j.at("total_steps");
    st.warmup_steps = j.at("warmup_steps");
    st.base_lr = j.at("base_lr");
    st.lr_schedule = j.at("lr_schedule");
    st.best_metric = j.at("best_metric").is_null() ? NAN : j.at("best_metric").get<double>();
    st.best_step = j.at("best_step");
    st.samples_seen = j.at("samples_seen");
    st.world_size = j.at("world_size");
    if (j.contains("loss_windows"))
      st.loss_windows = j.at("loss_windows").get<std::map<std::string, std::vector<double>>>();
    else
      st.loss_windows["loss"] = j.at("loss_window").get<std::vector<double>>();
    st.data_cursor = j.value("data_cursor", std::string());
    st.loss_scale = j.value("loss_scale", 0.0);
    st.loss_scale_good_steps = j.value("loss_scale_good_steps", int64_t(0));
  } catch (const std::exception& e) {
    throw DataError(std::string("corrupt trainer_state.json: ") + e.what(), state_file);
  }
  optimizer.load_state(io::read_safetensors(dir + "/train_state/optimizer.safetensors").to_map());
  auto rng = io::read_safetensors(dir + "/train_state/rng.safetensors");
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(rng.at("torch_cpu"));
  return st;
}

std::string resolve_resume_dir(const std::string& spec, const std::string& checkpoint_dir) {
  if (spec == "latest") {
    auto all = list_checkpoints(checkpoint_dir);
    if (all.empty())
      throw DataError("no checkpoint-<step> directory to resume from", checkpoint_dir,
                      "train without resume_from_checkpoint first");
    return all.back().second.string();
  }
  if (!fs::is_directory(spec))
    throw DataError("checkpoint to resume from does not exist", spec,
                    "use \"latest\" or a checkpoint-<step> directory");
  return spec;
}

void prune_checkpoints(const std::string& checkpoint_dir, int64_t keep) {
  auto all = list_checkpoints(checkpoint_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) {
    std::error_code ec;
    fs::remove_all(all[i].second, ec);
  }
}

}  // namespace et::train
