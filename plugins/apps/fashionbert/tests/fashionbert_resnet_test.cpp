// fashionbert_resnet_test.cpp: the FashionBERT app's ResNet-50 patch encoder, white-box — torchvision's
// parameter names, features matching torchvision (run through /usr/bin/python3) on two input shapes from both
// .pth and .safetensors weights, and state dicts with a missing key, a wrong shape or an unexpected key
// refused.
#include "../resnet50.cpp"

#include <doctest/doctest.h>

#include <memory>
#include <set>

#include "process.h"
#include "test_paths.h"

namespace fb = et::apps::fashionbert;

namespace {

const std::string kPython = "/usr/bin/python3";
const std::string kScript = ETHOST_SOURCE_DIR "/plugins/apps/fashionbert/tests/make_resnet50_golden.py";
// Both sides use this many intra-op threads: convolutions sum in a thread-count dependent order (1 vs 2
// threads differ by ~1e-4 here, equal counts agree bit for bit). One thread keeps the script fast on a
// loaded machine (OpenMP teams spin badly when the cores are busy).
constexpr int kThreads = 1;

// The script's outputs: a seeded torchvision resnet50 (.pth, .safetensors, one with a key removed) and its
// features on two input batches (golden.pt: x28, y28, x64, y64).
struct Golden {
  std::unique_ptr<et::test::TempDir> dir;
  et::io::StateDict io;
  std::string path(const std::string& name) const { return *dir / name; }
};

std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(text.find_last_of('\n') + 1);
}

std::unique_ptr<Golden> make_golden() {
  auto probe = et::test::run_process({kPython, "-c", "import torch, torchvision"});
  REQUIRE_MESSAGE(probe.exit_code == 0,
                  "install python3-torch and python3-torchvision (apt-get install "
                  "python3-torchvision): "
                      << kPython << " cannot import them: " << last_line(probe.err));
  auto g = std::make_unique<Golden>();
  g->dir = std::make_unique<et::test::TempDir>("fb_resnet");
  auto r = et::test::run_process({kPython, kScript, g->dir->path(), "1234", std::to_string(kThreads)}, {}, {},
                                 300.0);
  REQUIRE_MESSAGE(r.exit_code == 0, "make_resnet50_golden.py failed: " << r.err);
  g->io = et::io::read_torch_bin(g->path("golden.pt"));
  return g;
}

// Made once for the whole suite (the script takes a few seconds and writes ~300 MB).
const Golden& golden() {
  static std::unique_ptr<Golden> g;
  if (!g) g = make_golden();
  return *g;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

void check_matches_torchvision(fb::ResNet50& net, const std::string& label) {
  torch::NoGradGuard no_grad;
  const int threads = at::get_num_threads();
  at::set_num_threads(kThreads);
  for (const std::string shape : {"28", "64"}) {
    const at::Tensor& x = golden().io.at("x" + shape);
    const at::Tensor& want = golden().io.at("y" + shape);
    at::Tensor got = net->forward(x);
    REQUIRE(got.sizes() == want.sizes());
    const double diff = max_abs_diff(got, want);
    MESSAGE(label << ", " << x.sizes() << ": max |C++ - torchvision| = " << diff);
    CHECK(diff <= 1e-4);
  }
  at::set_num_threads(threads);
}

// The what() of the et::DataError load_resnet50 throws for path (fails the test when nothing is thrown).
std::string load_error(const std::string& path) {
  fb::ResNet50 net;
  try {
    fb::load_resnet50(net, path);
  } catch (const et::DataError& e) {
    return e.what();
  }
  FAIL("load_resnet50 accepted " << path);
  return {};
}

et::io::StateDict good_state_dict() {
  return et::io::read_safetensors(golden().path("resnet50.safetensors"));
}

}  // namespace

TEST_SUITE("plugin.fashionbert_resnet") {
  TEST_CASE("architecture: torchvision's state_dict names (without fc) and 23,508,032 parameters") {
    fb::ResNet50 net;
    std::set<std::string> names;
    int64_t count = 0;
    for (const auto& p : net->named_parameters()) {
      names.insert(p.key());
      count += p.value().numel();
    }
    for (const auto& b : net->named_buffers()) names.insert(b.key());
    std::set<std::string> want;
    for (const auto& [key, t] : good_state_dict())
      if (key != "fc.weight" && key != "fc.bias") want.insert(key);
    CHECK(names == want);
    CHECK(names.count("layer1.0.downsample.1.running_var") == 1);
    CHECK(names.count("layer1.1.downsample.0.weight") == 0);
    CHECK(count == 23508032);  // torchvision resnet50's 25,557,032 less fc's 2,049,000
  }

  TEST_CASE(".pth weights: features match torchvision on 28x28 patches and 64x64 images") {
    fb::ResNet50 net;
    fb::load_resnet50(net, golden().path("resnet50.pth"));
    CHECK_FALSE(net->is_training());
    check_matches_torchvision(net, ".pth");
  }

  TEST_CASE(".safetensors weights: features match torchvision; fc and num_batches_tracked are optional") {
    fb::ResNet50 net;
    fb::load_resnet50(net, golden().path("resnet50.safetensors"));
    CHECK_FALSE(net->is_training());
    check_matches_torchvision(net, ".safetensors");

    et::io::StateDict sd = good_state_dict();
    sd.erase("fc.weight");
    sd.erase("fc.bias");
    for (const auto& key : sd.keys())
      if (fb::optional_key(key)) sd.erase(key);  // the num_batches_tracked buffers
    const std::string path = golden().path("no_fc.safetensors");
    et::io::write_safetensors(path, sd);
    fb::ResNet50 net2;
    fb::load_resnet50(net2, path);
    check_matches_torchvision(net2, ".safetensors without fc and num_batches_tracked");
    std::filesystem::remove(path);
  }

  TEST_CASE("a state dict missing a key is refused, naming the file and the key") {
    const std::string path = golden().path("resnet50_missing.pth");
    const std::string e = load_error(path);
    CHECK_MESSAGE(et::test::contains(e, "missing key 'layer4.2.bn3.weight'"), e);
    CHECK_MESSAGE(et::test::contains(e, path), e);
    CHECK_MESSAGE(et::test::contains(e, "expected a torchvision resnet50 state dict"), e);
  }

  TEST_CASE("a shape mismatch is refused, naming the key and both shapes") {
    et::io::StateDict sd = good_state_dict();
    sd.set("layer2.1.conv2.weight", torch::zeros({128, 128, 1, 1}));
    const std::string path = golden().path("bad_shape.safetensors");
    et::io::write_safetensors(path, sd);
    const std::string e = load_error(path);
    std::filesystem::remove(path);
    CHECK_MESSAGE(et::test::contains(e, "key 'layer2.1.conv2.weight' has shape [128, 128, 1, 1]"), e);
    CHECK_MESSAGE(et::test::contains(e, "needs [128, 128, 3, 3]"), e);
    CHECK_MESSAGE(et::test::contains(e, path), e);
  }

  TEST_CASE("an unexpected key is refused; prefixed keys get a hint to strip the prefix; a missing file") {
    et::io::StateDict sd = good_state_dict();
    sd.set("layer5.0.conv1.weight", torch::zeros({1}));
    const std::string path = golden().path("extra.safetensors");
    et::io::write_safetensors(path, sd);
    const std::string e = load_error(path);
    std::filesystem::remove(path);
    CHECK_MESSAGE(et::test::contains(e, "unexpected key 'layer5.0.conv1.weight'"), e);

    const std::string prefixed = golden().path("prefixed.safetensors");
    et::io::write_safetensors(prefixed, et::io::StateDict{{"module.bn1.bias", torch::zeros({64})}});
    const std::string p = load_error(prefixed);
    CHECK_MESSAGE(et::test::contains(p, "missing key 'bn1.bias' (and "), p);
    CHECK_MESSAGE(et::test::contains(p, "unexpected keys such as 'module.bn1.bias'"), p);
    CHECK_MESSAGE(et::test::contains(p, "strip the key prefix"), p);

    const std::string none = load_error(golden().path("no_such.pth"));
    CHECK_MESSAGE(et::test::contains(none, "resnet50 weights file not found"), none);
  }
}
