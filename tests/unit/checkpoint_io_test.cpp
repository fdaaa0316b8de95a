// checkpoint_io_test.cpp: et::io — safetensors reader/writer and validation, torch .bin (zip) loading with
// our unpickler, sharded checkpoints, checkpoint directory resolution, dtype conversion and atomic directory
// writes.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <functional>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/io/state_dict.h"
#include "ethost/io/torch_bin.h"
#include "process.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using et::io::StateDict;
using json = nlohmann::json;

namespace {

const std::string kDir = ETHOST_FIXTURES_DIR "/checkpoints";

std::string fixture(const std::string& name) { return kDir + "/" + name; }

const json& expected() {
  static const json j = json::parse(et::test::read_file(fixture("expected.json")));
  return j;
}

struct Caught {
  bool data_error = false;
  int exit_code = 0;
  std::string msg = "(no error)";
};

Caught error_of(const std::function<void()>& fn) {
  Caught c;
  try {
    fn();
  } catch (const et::DataError& e) {
    c.data_error = true;
    c.exit_code = e.exit_code();
    c.msg = e.what();
  } catch (const std::exception& e) {
    c.msg = std::string("wrong exception type: ") + e.what();
  }
  return c;
}

// Expects a DataError whose message names the file and contains `reason`.
void expect_data_error(const std::function<void()>& fn, const std::string& path, const std::string& reason) {
  Caught c = error_of(fn);
  INFO("message: " << c.msg);
  CHECK(c.data_error);
  CHECK(c.exit_code == 4);
  CHECK(et::test::contains(c.msg, path));
  CHECK(et::test::contains(c.msg, reason));
}

std::string dt(const at::Tensor& t) { return c10::toString(t.scalar_type()); }

std::string bytes_of(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()),
                     static_cast<std::size_t>(c.numel()) * c.element_size());
}

// Compares a tensor with an expected.json entry (dtype code, shape, values in row-major order) exactly.
void check_against(const std::string& name, const at::Tensor& t, const json& exp) {
  INFO("tensor " << name);
  REQUIRE(t.defined());
  CHECK(et::io::safetensors_dtype_name(t.scalar_type()) == exp["dtype"].get<std::string>());
  CHECK(t.sizes().vec() == exp["shape"].get<std::vector<std::int64_t>>());
  const json& values = exp["values"];
  REQUIRE(static_cast<std::size_t>(t.numel()) == values.size());
  at::Tensor flat = t.contiguous().flatten();
  if (t.scalar_type() == at::kBool) {
    auto acc = flat.accessor<bool, 1>();
    for (std::int64_t i = 0; i < flat.numel(); ++i) CHECK(acc[i] == values[i].get<bool>());
  } else if (at::isFloatingType(t.scalar_type())) {
    at::Tensor d = flat.to(at::kDouble);
    auto acc = d.accessor<double, 1>();
    for (std::int64_t i = 0; i < d.numel(); ++i) CHECK(acc[i] == values[i].get<double>());
  } else {
    at::Tensor d = flat.to(at::kLong);
    auto acc = d.accessor<std::int64_t, 1>();
    for (std::int64_t i = 0; i < d.numel(); ++i) CHECK(acc[i] == values[i].get<std::int64_t>());
  }
}

void check_small(const StateDict& sd) {
  const json& small = expected()["small"];
  CHECK(sd.keys() == expected()["small_order"].get<std::vector<std::string>>());
  for (auto it = small.begin(); it != small.end(); ++it) {
    REQUIRE(sd.contains(it.key()));
    check_against(it.key(), sd.at(it.key()), *it);
    CHECK(sd.at(it.key()).is_contiguous());
  }
}

void check_sharded(const StateDict& sd) {
  const json& exp = expected()["sharded"];
  CHECK(sd.size() == exp.size());
  for (auto it = exp.begin(); it != exp.end(); ++it) {
    REQUIRE(sd.contains(it.key()));
    check_against(it.key(), sd.at(it.key()), *it);
  }
}

// A safetensors file from a header text (padded to 8 with spaces) and a data buffer.
std::string make_st(std::string header, const std::string& data, bool pad = true) {
  if (pad) header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

std::uint64_t le64(const std::string& s) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[i]);
  return n;
}

// Tensors of every supported dtype, including non-contiguous, scalar and empty ones.
StateDict all_dtypes() {
  torch::manual_seed(7);
  StateDict sd;
  sd.set("z.f32", torch::randn({3, 5}));
  sd.set("a.f16", torch::randn({4, 2}).to(at::kHalf));
  sd.set("m.bf16", torch::randn({7}).to(at::kBFloat16));
  sd.set("f64", torch::randn({2, 2}, at::kDouble));
  sd.set("i64", torch::tensor({std::int64_t{-9007199254740993}, std::int64_t{1} << 62, std::int64_t{0}}));
  sd.set("i32", torch::randint(-100000, 100000, {6}, at::kInt));
  sd.set("i16", torch::randint(-30000, 30000, {6}, at::kShort));
  sd.set("i8", torch::randint(-128, 127, {5}, at::kChar));
  sd.set("u8", torch::randint(0, 255, {5}, at::kByte));
  sd.set("bool", torch::tensor({true, false, true}));
  sd.set("transposed", torch::arange(12, at::kFloat).reshape({3, 4}).t());
  sd.set("scalar", torch::tensor(2.5));
  sd.set("empty", torch::zeros({0, 4}));
  return sd;
}

}  // namespace

TEST_SUITE("unit.checkpoint_io") {
  TEST_CASE("StateDict keeps insertion order, replaces in place and erases") {
    StateDict sd;
    sd.set("b", torch::ones({1}));
    sd.set("a", torch::zeros({1}));
    sd.set("c", torch::zeros({2}));
    sd.set("b", torch::zeros({3}));
    CHECK(sd.keys() == std::vector<std::string>{"b", "a", "c"});
    CHECK(sd.at("b").numel() == 3);
    CHECK(sd.erase("a"));
    CHECK_FALSE(sd.erase("a"));
    CHECK(sd.keys() == std::vector<std::string>{"b", "c"});
    CHECK(sd.find("c")->numel() == 2);
    CHECK(sd.find("a") == nullptr);
    CHECK_THROWS_AS(sd.at("a"), std::out_of_range);
    StateDict from_map(std::map<std::string, at::Tensor>{{"y", torch::ones({1})}, {"x", torch::ones({1})}});
    CHECK(from_map.keys() == std::vector<std::string>{"x", "y"});
  }

  TEST_CASE("safetensors: reads every dtype with the values Python wrote") {
    StateDict sd = et::io::read_safetensors(fixture("small.safetensors"));
    check_small(sd);
    auto meta = et::io::read_safetensors_metadata(fixture("small.safetensors"));
    CHECK(meta == std::map<std::string, std::string>{{"format", "pt"}, {"source", "make_fixtures.py"}});
  }

  TEST_CASE("safetensors: write then read is bit-identical for every dtype and keeps key order") {
    et::test::TempDir tmp("ckpt_roundtrip");
    StateDict sd = all_dtypes();
    std::string path = tmp / "rt.safetensors";
    et::io::write_safetensors(path, sd, {{"format", "pt"}, {"note", "round trip"}});
    StateDict back = et::io::read_safetensors(path);
    CHECK(back.keys() == sd.keys());
    for (const auto& [k, t] : sd) {
      INFO(k);
      REQUIRE(back.contains(k));
      CHECK(dt(back.at(k)) == dt(t));
      CHECK(back.at(k).sizes().vec() == t.sizes().vec());
      CHECK(bytes_of(back.at(k)) == bytes_of(t));
    }
    CHECK(et::io::read_safetensors_metadata(path).at("note") == "round trip");
    // The small fixture survives a rewrite too.
    StateDict small = et::io::read_safetensors(fixture("small.safetensors"));
    et::io::write_safetensors(tmp / "small.safetensors", small);
    check_small(et::io::read_safetensors(tmp / "small.safetensors"));
    // Nothing but the two files is left behind (no temporary files).
    int files = 0;
    for (const auto& e : fs::directory_iterator(tmp.path())) files += e.is_regular_file() ? 1 : 0;
    CHECK(files == 2);
  }

  TEST_CASE("safetensors: written header is valid (LE length, padded JSON, contiguous offsets from 0)") {
    et::test::TempDir tmp("ckpt_header");
    StateDict sd = all_dtypes();
    std::string path = tmp / "h.safetensors";
    et::io::write_safetensors(path, sd);
    std::string file = et::test::read_file(path);
    std::uint64_t n = le64(file);
    CHECK(n % 8 == 0);
    REQUIRE(8 + n <= file.size());
    std::string text = file.substr(8, n);
    CHECK(text.front() == '{');
    std::string trimmed = text.substr(0, text.find_last_not_of(' ') + 1);
    CHECK(trimmed.back() == '}');
    CHECK(text.size() - trimmed.size() < 8);
    auto header = nlohmann::ordered_json::parse(text);
    CHECK(header["__metadata__"] == nlohmann::ordered_json{{"format", "pt"}});
    std::uint64_t cursor = 0;
    std::vector<std::string> order;
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      order.push_back(it.key());
      auto offs = (*it)["data_offsets"].get<std::vector<std::uint64_t>>();
      CHECK(offs[0] == cursor);
      cursor = offs[1];
    }
    CHECK(order == sd.keys());
    CHECK(cursor == file.size() - 8 - n);
  }

  TEST_CASE("safetensors: every corrupt file is a DataError naming the file and the reason") {
    et::test::TempDir tmp("ckpt_corrupt");
    const std::string good = et::test::read_file(fixture("small.safetensors"));
    int idx = 0;
    auto check = [&](const std::string& bytes, const std::string& reason) {
      std::string p = tmp / ("case" + std::to_string(idx++) + ".safetensors");
      et::test::write_file(p, bytes);
      INFO("case " << idx - 1 << ": " << reason);
      expect_data_error([&] { et::io::read_safetensors(p); }, p, reason);
    };
    const std::string f32_6 = std::string(24, '\0');  // 6 floats
    check("", "file is too short (0 bytes)");
    check(good.substr(0, 5), "file is too short (5 bytes)");
    std::string big_len = good;
    big_len[6] = 1;  // header length ~2^48
    check(big_len, "-byte limit");
    std::string long_len = good;
    std::uint64_t n = le64(good) + 100000;
    for (int i = 0; i < 8; ++i) long_len[i] = static_cast<char>(n >> (8 * i));
    check(long_len, "larger than the file allows");
    check(good.substr(0, good.size() - 4), "lie outside the data buffer");
    check(good.substr(0, 8 + le64(good) - 10), "larger than the file allows");
    check(make_st("{\"a\": {\"dtype\": \"F32\", ", f32_6), "header is not valid JSON");
    check(make_st("[1, 2]", ""), "header is not a JSON object");
    check(make_st(R"({"a":{"dtype":"F8","shape":[2,3],"data_offsets":[0,24]}})", f32_6),
          "unknown dtype 'F8'");
    check(make_st(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,24]}})", f32_6),
          "tensor 'a': shape [2, 2] of F32 needs 16 bytes but data_offsets [0, 24] hold 24");
    check(make_st(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,24]}})", f32_6),
          "\"shape\" must be a list of non-negative integers");
    check(make_st(R"({"a":{"dtype":"F32","shape":[-6],"data_offsets":[0,24]}})", f32_6),
          "\"shape\" must be a list of non-negative integers");
    check(make_st(R"({"a":{"dtype":"F32","shape":"6","data_offsets":[0,24]}})", f32_6), "missing \"shape\"");
    check(make_st(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[24,0]}})", f32_6),
          "\"data_offsets\" must be");
    check(make_st(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[8,32]}})", f32_6),
          "tensor 'a': data_offsets [8, 32] lie outside the data buffer (24 bytes");
    check(make_st(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                  R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                  f32_6),
          "tensors 'a' [0, 16] and 'b' [8, 24] overlap");
    check(make_st(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[3],"data_offsets":[12,24]}})",
                  f32_6),
          "hole in the data buffer: bytes [8, 12) belong to no tensor");
    check(make_st(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", f32_6),
          "the data buffer has 24 bytes but the tensors cover only 16");
    check(make_st(R"({"__metadata__":{"n":1},"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", f32_6),
          "\"__metadata__\" must map strings to strings");
    check(make_st(R"({"a":[1]})", ""), "tensor 'a': header entry is not an object");
    check(make_st(R"({"a":{"dtype":"F32","shape":[[[6]]],"data_offsets":[0,24]}})", f32_6),
          "got a nested array");
    // A hostile, deeply nested header fails cleanly (no recursion in parsing, messages or destruction).
    check(make_st(std::string(200000, '[') + std::string(200000, ']'), ""),
          "header is not a JSON object (found array)");
    // The same header with valid offsets reads fine (the helper itself builds valid files).
    std::string ok = tmp / "ok.safetensors";
    et::test::write_file(ok, make_st(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", f32_6));
    CHECK(et::io::read_safetensors(ok).at("a").sizes().vec() == std::vector<std::int64_t>{2, 3});
    // A missing file is a DataError too.
    expect_data_error([&] { et::io::read_safetensors(tmp / "nope.safetensors"); }, "nope.safetensors",
                      "cannot open");
  }

  TEST_CASE("safetensors: writing rejects bad names and dtypes") {
    et::test::TempDir tmp("ckpt_write_err");
    StateDict sd;
    sd.set("__metadata__", torch::zeros({1}));
    expect_data_error([&] { et::io::write_safetensors(tmp / "a.safetensors", sd); }, "a.safetensors",
                      "__metadata__");
    StateDict cplx;
    cplx.set("c", torch::zeros({2}, at::kComplexFloat));
    expect_data_error([&] { et::io::write_safetensors(tmp / "b.safetensors", cplx); }, "b.safetensors",
                      "cannot be stored");
    CHECK_FALSE(fs::exists(tmp / "b.safetensors"));
  }

  TEST_CASE(".bin: dict and OrderedDict top levels (protocols 2 and 4) load with Python's values") {
    for (const char* name : {"small_dict.bin", "small_ordereddict.bin", "small_proto4.bin"}) {
      INFO(name);
      StateDict sd = et::io::read_torch_bin(fixture(name));
      check_small(sd);
      // Views of one saved storage come back as independent tensors.
      sd.at("view_a").fill_(999.0);
      CHECK(sd.at("view_b")[3].item<float>() == doctest::Approx(-0.75));
    }
  }

  TEST_CASE(".bin: tiny BERT saved as an OrderedDict matches model.safetensors bit for bit") {
    const std::string tb = ETHOST_FIXTURES_DIR "/tiny_bert/";
    StateDict bin = et::io::read_torch_bin(tb + "pytorch_model_ordereddict.bin");
    StateDict st = et::io::read_safetensors(tb + "model.safetensors");
    std::vector<std::string> differ, only_bin, only_st;
    for (const auto& [k, t] : bin) {
      const at::Tensor* s = st.find(k);
      if (!s) {
        only_bin.push_back(k);
        continue;
      }
      if (s->scalar_type() != t.scalar_type() || s->sizes() != t.sizes() || bytes_of(*s) != bytes_of(t))
        differ.push_back(k);
    }
    for (const auto& [k, t] : st)
      if (!bin.contains(k)) only_st.push_back(k);
    std::string report;
    for (auto& k : only_bin) report += " " + k;
    MESSAGE("tiny_bert: " << bin.size() << " tensors in the .bin, " << st.size()
                          << " in safetensors; only in .bin:" << report);
    CHECK(differ.empty());
    CHECK(only_st.empty());
    CHECK(bin.size() == 49);
    CHECK(bin.keys().front() == "bert.embeddings.position_ids");
    CHECK(dt(bin.at("bert.embeddings.position_ids")) == "Long");
    // The tied decoder weight shares its storage with the word embeddings in the file; here it is a copy.
    REQUIRE(bin.contains("cls.predictions.decoder.weight"));
    CHECK(bytes_of(bin.at("cls.predictions.decoder.weight")) ==
          bytes_of(st.at("bert.embeddings.word_embeddings.weight")));
    CHECK(bin.at("cls.predictions.decoder.weight").data_ptr() !=
          bin.at("bert.embeddings.word_embeddings.weight").data_ptr());
  }

  TEST_CASE(".bin: legacy, foreign and corrupt files are DataErrors that say why") {
    et::test::TempDir tmp("ckpt_bin_err");
    std::string legacy = fixture("small_legacy.bin");
    expect_data_error([&] { et::io::read_torch_bin(legacy); }, legacy,
                      "legacy (pre-1.6, non-zip) torch.save format");
    expect_data_error([&] { et::io::read_torch_bin(legacy); }, legacy,
                      "torch.save(torch.load('old.bin'), 'new.bin')");
    std::string bad_op = fixture("bad_opcode.bin");
    expect_data_error([&] { et::io::read_torch_bin(bad_op); }, bad_op,
                      "unsupported pickle opcode 0x64 DICT at byte 1 of data.pkl");
    std::string glob = fixture("unknown_global.bin");
    expect_data_error([&] { et::io::read_torch_bin(glob); }, glob, "unsupported global 'datetime.date'");
    std::string nt = fixture("not_tensors.bin");
    expect_data_error([&] { et::io::read_torch_bin(nt); }, nt, "entry 'step' is a int, not a tensor");
    std::string deep = fixture("deep_nesting.bin");  // a million nested tuples
    expect_data_error([&] { et::io::read_torch_bin(deep); }, deep,
                      "data.pkl holds a tuple, not a dict of tensors");
    std::string nd = fixture("no_datapkl.bin");
    expect_data_error([&] { et::io::read_torch_bin(nd); }, nd, "TorchScript archive");
    std::string good = et::test::read_file(fixture("small_dict.bin"));
    std::string cut = tmp / "cut.bin";
    et::test::write_file(cut, good.substr(0, good.size() / 2));
    expect_data_error([&] { et::io::read_torch_bin(cut); }, cut, "cannot read the zip archive");
    std::string junk = tmp / "junk.bin";
    et::test::write_file(junk, "hello, not a checkpoint");
    expect_data_error([&] { et::io::read_torch_bin(junk); }, junk, "not a PyTorch checkpoint");
    std::string st = fixture("small.safetensors");
    expect_data_error([&] { et::io::read_torch_bin(st); }, st, "not a PyTorch checkpoint");
  }

  TEST_CASE("sharded: safetensors and .bin shards load every parameter once") {
    StateDict a = et::io::read_sharded(fixture("sharded_safetensors/model.safetensors.index.json"));
    check_sharded(a);
    CHECK(a.keys() ==
          std::vector<std::string>{"layer0.weight", "layer0.bias", "emb", "layer1.weight", "layer1.bias"});
    StateDict b = et::io::read_sharded(fixture("sharded_bin/pytorch_model.bin.index.json"));
    check_sharded(b);
  }

  TEST_CASE("sharded: missing shard, missing parameter and bad index are DataErrors") {
    et::test::TempDir tmp("ckpt_shard_err");
    const std::string src = fixture("sharded_safetensors/");
    std::string index = et::test::read_file(src + "model.safetensors.index.json");
    fs::copy_file(src + "model-00001-of-00002.safetensors", tmp / "model-00001-of-00002.safetensors");
    std::string idx = tmp / "model.safetensors.index.json";
    et::test::write_file(idx, index);
    expect_data_error([&] { et::io::read_sharded(idx); }, idx, "shard 'model-00002-of-00002.safetensors'");
    expect_data_error([&] { et::io::read_sharded(idx); }, idx, "does not exist");
    fs::copy_file(src + "model-00002-of-00002.safetensors", tmp / "model-00002-of-00002.safetensors");
    auto doc = json::parse(index);
    doc["weight_map"]["ghost.weight"] = "model-00002-of-00002.safetensors";
    et::test::write_file(idx, doc.dump());
    expect_data_error([&] { et::io::read_sharded(idx); }, idx,
                      "parameter 'ghost.weight' is mapped to shard 'model-00002-of-00002.safetensors'");
    doc["weight_map"]["ghost.weight"] = "../elsewhere.safetensors";
    et::test::write_file(idx, doc.dump());
    expect_data_error([&] { et::io::read_sharded(idx); }, idx, "relative to the index's folder");
    et::test::write_file(idx, "{\"metadata\": {}}");
    expect_data_error([&] { et::io::read_sharded(idx); }, idx, "no \"weight_map\"");
    et::test::write_file(idx, "{oops");
    expect_data_error([&] { et::io::read_sharded(idx); }, idx, "index is not valid JSON");
  }

  TEST_CASE("load_checkpoint_weights follows the Hugging Face resolution order") {
    et::test::TempDir tmp("ckpt_resolve");
    std::string d = tmp.path();
    expect_data_error([&] { et::io::load_checkpoint_weights(d); }, d,
                      "no model weights found (looked for model.safetensors, model.safetensors.index.json, "
                      "pytorch_model.bin, pytorch_model.bin.index.json)");
    expect_data_error([&] { et::io::load_checkpoint_weights(tmp / "missing"); }, "missing", "does not exist");
    for (const auto& e : fs::directory_iterator(fixture("sharded_safetensors")))
      fs::copy_file(e.path(), tmp / e.path().filename().string());
    for (const auto& e : fs::directory_iterator(fixture("sharded_bin")))
      fs::copy_file(e.path(), tmp / e.path().filename().string());
    fs::copy_file(fixture("small.safetensors"), tmp / "model.safetensors");
    fs::copy_file(fixture("small_dict.bin"), tmp / "pytorch_model.bin");
    std::string used;
    StateDict sd = et::io::load_checkpoint_weights(d, &used);
    CHECK(used == tmp / "model.safetensors");
    check_small(sd);
    fs::remove(tmp / "model.safetensors");
    sd = et::io::load_checkpoint_weights(d, &used);
    CHECK(used == tmp / "model.safetensors.index.json");
    check_sharded(sd);
    CHECK(dt(sd.at("emb")) == "Half");
    fs::remove(tmp / "model.safetensors.index.json");
    sd = et::io::load_checkpoint_weights(d, &used);
    CHECK(used == tmp / "pytorch_model.bin");
    check_small(sd);
    fs::remove(tmp / "pytorch_model.bin");
    sd = et::io::load_checkpoint_weights(d, &used);
    CHECK(used == tmp / "pytorch_model.bin.index.json");
    check_sharded(sd);
    CHECK(dt(sd.at("layer1.bias")) == "Long");
  }

  TEST_CASE("to_dtype converts floating tensors only") {
    StateDict sd = et::io::read_safetensors(fixture("small.safetensors"));
    StateDict orig = sd;
    et::io::to_dtype(sd, at::kFloat);
    for (const auto& [k, t] : sd) {
      INFO(k);
      const at::Tensor& o = orig.at(k);
      if (at::isFloatingType(o.scalar_type())) {
        CHECK(dt(t) == "Float");
        if (o.scalar_type() != at::kDouble) CHECK(torch::equal(t, o.to(at::kFloat)));
      } else {
        CHECK(dt(t) == dt(o));
      }
    }
    CHECK(sd.at("bf16")[0].item<float>() == 100.0f);
  }

  TEST_CASE("AtomicDir: commit publishes, abort leaves nothing, recommit replaces the old directory") {
    et::test::TempDir tmp("ckpt_atomic");
    std::string final_dir = tmp / "out/model";
    auto leftovers = [&] {
      std::vector<std::string> names;
      for (const auto& e : fs::directory_iterator(tmp / "out")) names.push_back(e.path().filename().string());
      return names;
    };
    {
      et::io::AtomicDir dir(final_dir);
      CHECK(fs::is_directory(dir.tmp_path()));
      CHECK(fs::path(dir.tmp_path()).parent_path() == fs::path(tmp / "out"));
      CHECK(et::test::contains(dir.tmp_path(), "model.tmp-"));
      et::test::write_file(dir.path("a.txt"), "aborted");
      CHECK_FALSE(fs::exists(final_dir));
    }  // not committed
    CHECK_FALSE(fs::exists(final_dir));
    CHECK(leftovers().empty());
    {
      et::io::AtomicDir dir(final_dir + "/");
      et::test::write_file(dir.path("a.txt"), "one");
      fs::create_directories(dir.path("sub"));
      et::test::write_file(dir.path("sub/b.txt"), "two");
      dir.commit();
      CHECK(dir.committed());
    }
    CHECK(et::test::read_file(final_dir + "/a.txt") == "one");
    CHECK(et::test::read_file(final_dir + "/sub/b.txt") == "two");
    CHECK(leftovers() == std::vector<std::string>{"model"});
    {
      et::io::AtomicDir dir(final_dir);
      et::test::write_file(dir.path("c.txt"), "three");
      CHECK(et::test::read_file(final_dir + "/a.txt") == "one");  // the old one stays until commit
      dir.commit();
    }
    CHECK(et::test::read_file(final_dir + "/c.txt") == "three");
    CHECK_FALSE(fs::exists(final_dir + "/a.txt"));
    CHECK(leftovers() == std::vector<std::string>{"model"});
    // A file in the way is an error.
    et::test::write_file(tmp / "out/file", "x");
    expect_data_error([&] { et::io::AtomicDir d(tmp / "out/file"); }, "out/file", "not a directory");
  }

  TEST_CASE("write_file_atomic writes and replaces without leaving temporary files") {
    et::test::TempDir tmp("ckpt_atomic_file");
    std::string p = tmp / "config.json";
    et::io::write_file_atomic(p, "{}");
    CHECK(et::test::read_file(p) == "{}");
    et::io::write_file_atomic(p, "{\"a\": 1}");
    CHECK(et::test::read_file(p) == "{\"a\": 1}");
    int n = 0;
    for (const auto& e : fs::directory_iterator(tmp.path())) n += e.is_regular_file() ? 1 : 0;
    CHECK(n == 1);
    expect_data_error([&] { et::io::write_file_atomic(tmp / "no/such/dir/x", "y"); }, "no/such/dir/x",
                      "cannot create");
  }
}

TEST_SUITE("integration.checkpoint_io") {
  TEST_CASE("safetensors: files we write pass an independent Python parser with Python's values") {
    et::test::TempDir tmp("ckpt_python");
    StateDict small = et::io::read_safetensors(fixture("small.safetensors"));
    std::string path = tmp / "ours.safetensors";
    et::io::write_safetensors(path, small);
    auto r = et::test::run_process(
        {"python3", fixture("check_safetensors.py"), path, fixture("expected.json"), "small"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto report = json::parse(r.out);
    CHECK(report["errors"].empty());
    CHECK(report["metadata"] == json{{"format", "pt"}});
    CHECK(report["order"] == expected()["small_order"]);
  }
}
