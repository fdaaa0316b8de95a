// distributed_test.cpp: multi-process training through `ethost --nproc_per_node N` on CPU (c10d Gloo) — DDP
// and ZeRO 1-3 equal one process with the global batch, accumulation equals a larger batch, ZeRO's per-rank
// memory, ZeRO-2 resume on other world sizes, and a killed worker stopping the whole job.
#include <torch/torch.h>

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "dist_support.h"
#include "ethost/io/safetensors.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace et::test::dist;

TEST_SUITE("integration.distributed") {
  TEST_CASE(
      "DDP and ZeRO 1-3 on 2 ranks match 1 rank with the global batch; accumulation matches a larger batch") {
    et::test::TempDir dir("dist_eq");
    auto base = train(dir, "base", 0, {"train.micro_batch_size=8"});
    INFO(tail(base.r.err));
    REQUIRE(base.r.exit_code == 0);
    REQUIRE(base.losses.size() == 6);
    const std::string base_w = dir / "base/checkpoint-6/model.safetensors";

    {  // gradient accumulation 2 x 4 equals batch 8
      auto acc = train(dir, "acc", 0, {"train.micro_batch_size=4", "train.gradient_accumulation_steps=2"});
      INFO(tail(acc.r.err));
      REQUIRE(acc.r.exit_code == 0);
      check_same_curve(base, acc, 1e-5);
      CHECK(max_weight_diff(base_w, dir / "acc/checkpoint-6/model.safetensors") < 1e-5);
    }
    for (int stage : {0, 1, 2, 3}) {
      {
        CAPTURE(stage);
        std::string name = "z" + std::to_string(stage);
        // DDP with 0.25 MB buckets: ~10 buckets, launched in order from the hooks while backward runs.
        std::vector<std::string> sets{"train.micro_batch_size=4",
                                      "train.zero_stage=" + std::to_string(stage)};
        if (stage == 0) sets.push_back("distributed.bucket_mb=0.25");
        auto d = train(dir, name, 2, sets);
        INFO(tail(d.r.err));
        REQUIRE(d.r.exit_code == 0);
        CHECK(contains(d.r.err, "[rank 0]"));
        CHECK(contains(d.r.err, "world size 2"));
        if (stage > 0) CHECK(contains(d.r.err, "ZeRO stage " + std::to_string(stage)));
        if (stage == 0) CHECK(contains(d.r.err, " buckets of <= 0.25 MB"));
        check_same_curve(base, d, 1e-5);
        CHECK(max_weight_diff(base_w, dir / (name + "/checkpoint-6/model.safetensors")) < 1e-5);
        // Rank 0 alone writes outputs; metrics are reduced over ranks (the eval event exists once).
        CHECK(fs::exists(dir / (name + "/checkpoint-6/train_state/optimizer.safetensors")));
      }
    }
    {  // 2 ranks x 2 with accumulation 2 equals batch 8
      auto d = train(dir, "dacc", 2, {"train.micro_batch_size=2", "train.gradient_accumulation_steps=2"});
      INFO(tail(d.r.err));
      REQUIRE(d.r.exit_code == 0);
      check_same_curve(base, d, 1e-5);
      CHECK(max_weight_diff(base_w, dir / "dacc/checkpoint-6/model.safetensors") < 1e-5);
    }
  }

  TEST_CASE(
      "ZeRO 1/2/3 on 4 ranks hold about 1/4 of the optimizer state (and gradients, parameters) per rank") {
    et::test::TempDir dir("dist_mem");
    std::map<int, nlohmann::json> mem;
    for (int stage : {0, 1, 2, 3}) {
      auto d = train(dir, "m" + std::to_string(stage), 4,
                     {"train.micro_batch_size=2", "train.max_steps=2",
                      "train.zero_stage=" + std::to_string(stage), "distributed.bucket_mb=0.5"});
      INFO(tail(d.r.err));
      REQUIRE(d.r.exit_code == 0);
      mem[stage] = last_event(d, "memory");
      REQUIRE(!mem[stage].is_null());
      CHECK(contains(d.r.err, "memory held by this rank"));
    }
    auto ratio = [&](int stage, const char* key) {
      return mem[stage][key].get<double>() / mem[0][key].get<double>();
    };
    CAPTURE(mem[0].dump());
    for (int stage : {1, 2, 3}) {
      CAPTURE(stage);
      CAPTURE(mem[stage].dump());
      CHECK(ratio(stage, "optimizer_state_bytes") == doctest::Approx(0.25).epsilon(0.05));
      if (stage >= 2)
        CHECK(ratio(stage, "gradient_bytes") == doctest::Approx(0.25).epsilon(0.05));
      else
        CHECK(ratio(stage, "gradient_bytes") == doctest::Approx(1.0).epsilon(0.01));
      if (stage == 3) CHECK(ratio(stage, "parameter_bytes") == doctest::Approx(0.25).epsilon(0.05));
    }
  }

  TEST_CASE("a 2-rank ZeRO-2 checkpoint resumes on 1 and on 4 ranks with the same losses") {
    et::test::TempDir dir("dist_resume");
    auto full = train(dir, "full", 2,
                      {"train.micro_batch_size=4", "train.zero_stage=2", "train.max_steps=8",
                       "train.save_checkpoint_steps=4"});
    INFO(tail(full.r.err));
    REQUIRE(full.r.exit_code == 0);
    REQUIRE(full.losses.size() == 8);
    for (int ranks : {1, 4}) {
      CAPTURE(ranks);
      std::string name = "r" + std::to_string(ranks);
      fs::create_directories(dir / name);
      fs::copy(dir / "full/checkpoint-4", dir / (name + "/checkpoint-4"), fs::copy_options::recursive);
      auto r = train(
          dir, name, ranks == 1 ? 0 : ranks,
          {"train.micro_batch_size=" + std::to_string(8 / ranks), "train.zero_stage=2", "train.max_steps=8",
           "train.save_checkpoint_steps=4", "train.resume_from_checkpoint=latest"});
      INFO(tail(r.r.err));
      REQUIRE(r.r.exit_code == 0);
      CHECK(contains(r.r.err, "resumed from "));
      REQUIRE(r.losses.size() == 4);  // steps 5..8
      std::vector<double> tail_full(full.losses.begin() + 4, full.losses.end());
      for (size_t i = 0; i < 4; ++i) {
        CAPTURE(i);
        CHECK(std::abs(r.losses[i] - tail_full[i]) <= 1e-5);
      }
      CHECK(max_weight_diff(dir / "full/checkpoint-8/model.safetensors",
                            dir / (name + "/checkpoint-8/model.safetensors")) < 1e-5);
    }
  }

  TEST_CASE("killing one worker stops the job with a message naming the rank, and leaves no process behind") {
    et::test::TempDir dir("dist_kill");
    write_file(dir / "k.toml", dist_config(dir / "k"));
    std::vector<std::string> argv{ETHOST_EXE,
                                  "--nproc_per_node",
                                  "2",
                                  "--worker_timeout",
                                  "5",
                                  "--no-default-plugins",
                                  "--plugin-dir",
                                  ETHOST_PLUGIN_DIR,
                                  "--app",
                                  "text_classify",
                                  "--config",
                                  dir / "k.toml",
                                  "--set",
                                  "train.max_steps=100000",
                                  "--set",
                                  "train.save_checkpoint_steps=2",
                                  "--set",
                                  "train.micro_batch_size=4"};
    int launcher = et::test::spawn_background(argv, dir / "log", {{"ETHOST_PLUGIN_PATH", ""}});
    // Wait (polling the file system, bounded) until training is under way on both ranks.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!fs::exists(dir / "k/checkpoint-2/train_state/trainer_state.json") &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(fs::exists(dir / "k/checkpoint-2/train_state/trainer_state.json"));
    auto workers = children_of(launcher);
    REQUIRE(workers.size() == 2);
    std::sort(workers.begin(), workers.end());  // forked in rank order: the second is rank 1
    auto t0 = std::chrono::steady_clock::now();
    kill(workers[1], SIGKILL);
    int status = et::test::wait_child(launcher);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string log = et::test::read_file(dir / "log");
    INFO(tail(log));
    CHECK(status != 0);
    CHECK(took < 5 + 10);  // the worker timeout plus slack
    CHECK(contains(log, "rank 1"));
    CHECK(contains(log, "killed by signal 9"));
    for (int w : workers) CHECK_FALSE(alive(w));
  }

  TEST_CASE("bf16 autocast with activation checkpointing trains (fp32 master weights)") {
    et::test::TempDir dir("bf16");
    auto base = train(dir, "fp32", 0, {"train.micro_batch_size=8", "train.max_steps=12"});
    auto r = train(dir, "bf16", 0,
                   {"train.micro_batch_size=8", "train.max_steps=12", "train.precision=bf16",
                    "train.activation_checkpointing=1", "train.offload_optimizer=true"});
    INFO(tail(r.r.err));
    REQUIRE(r.r.exit_code == 0);
    CHECK(contains(r.r.err, "precision bf16"));
    CHECK(contains(r.r.err, "offload_optimizer: no-op on this CPU build"));  // says so instead of pretending
    REQUIRE(r.losses.size() == 12);
    REQUIRE(base.losses.size() == 12);
    // bf16 rounding changes the numbers a little, not the trajectory.
    for (size_t i = 0; i < 12; ++i) {
      CAPTURE(i);
      CHECK(std::abs(r.losses[i] - base.losses[i]) < 0.05);
    }
    CHECK(r.losses.back() != base.losses.back());  // autocast really ran in lower precision
    // fp16 needs a CUDA LibTorch: refused with a message and the config exit code, not silently run in fp32.
    auto f16 = train(dir, "fp16", 0, {"train.max_steps=2", "train.precision=fp16"});
    CHECK(f16.r.exit_code == 2);
    CHECK(contains(f16.r.err, "needs a CUDA build of LibTorch"));
    // The saved weights are fp32 (master weights), in HF layout.
    auto w = et::io::read_safetensors(dir / "bf16/checkpoint-12/model.safetensors");
    for (auto& [k, t] : w)
      if (t.is_floating_point()) CHECK_MESSAGE(bool(t.scalar_type() == torch::kFloat), k);
  }
}
