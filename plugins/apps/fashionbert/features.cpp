// features.cpp: extraction (decode + crop in parallel, then the encoder), the cache file (a JSON header with
// a key over the table, the image files' sizes and times and the encoder settings, then the raw tensor), and
// batch assembly.
#include "features.h"

#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <tbb/parallel_for.h>
#include <torch/torch.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "resnet50.h"

namespace fs = std::filesystem;

namespace et::apps::fashionbert {
namespace {

constexpr char kMagic[8] = {'E', 'T', 'F', 'E', 'A', 'T', '1', '\n'};

uint64_t fnv(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;
}

std::string read_bytes(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the cache depends on: the table's bytes, each image's size and modification time, the encoder.
std::string cache_key(const PairTable& t, const EncoderOptions& e) {
  bool ok = false;
  uint64_t h = fnv(1469598103934665603ull, read_bytes(t.path, ok));
  for (const auto& img : t.image) {
    std::error_code ec;
    auto size = fs::file_size(img, ec);
    auto time = fs::last_write_time(img, ec).time_since_epoch().count();
    h = fnv(h, img + "|" + std::to_string(ec ? 0 : size) + "|" + std::to_string(ec ? 0 : time));
  }
  std::string w;
  if (!e.weights.empty()) {
    std::error_code ec;
    w = fs::absolute(e.weights).string() + "|" + std::to_string(fs::file_size(e.weights, ec));
  }
  h = fnv(h, e.name + "|" + std::to_string(e.image.size) + "|" + std::to_string(e.image.grid) + "|" + w);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string cache_path(const PairTable& t, const EncoderOptions& e, const std::string& dir) {
  char h[9];
  std::snprintf(h, sizeof h, "%08llx",
                static_cast<unsigned long long>(fnv(1469598103934665603ull, fs::absolute(t.path).string()) &
                                                0xffffffffull));
  return dir + "/" + fs::path(t.path).stem().string() + "-" + h + "." + e.name + ".s" +
         std::to_string(e.image.size) + "g" + std::to_string(e.image.grid) + ".feat";
}

bool read_cache(const std::string& path, const std::string& key, FeatureStore& fs_) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  uint64_t len = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0 ||
      !in.read(reinterpret_cast<char*>(&len), 8) || len > (1u << 26))
    return false;
  std::string hdr(len, '\0');
  if (!in.read(hdr.data(), static_cast<std::streamsize>(len))) return false;
  auto j = nlohmann::json::parse(hdr, nullptr, false);
  if (j.is_discarded() || j.value("key", "") != key) return false;
  std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
  auto dtype = j.at("dtype").get<std::string>() == "uint8" ? torch::kUInt8 : torch::kHalf;
  at::Tensor data = torch::empty(shape, torch::TensorOptions().dtype(dtype));
  const auto bytes = static_cast<std::streamsize>(data.numel() * data.element_size());
  if (!in.read(static_cast<char*>(data.data_ptr()), bytes)) return false;
  fs_.data = data;
  fs_.ok = j.at("ok").get<std::vector<uint8_t>>();
  fs_.bad_reasons = j.at("bad_reasons").get<std::vector<std::string>>();
  fs_.bad_images = j.at("bad_images").get<int64_t>();
  return true;
}

void write_cache(const std::string& path, const std::string& key, const FeatureStore& s) {
  nlohmann::json j;
  j["key"] = key;
  j["encoder"] = s.enc.name;
  j["shape"] = s.data.sizes().vec();
  j["dtype"] = s.data.scalar_type() == torch::kUInt8 ? "uint8" : "float16";
  j["ok"] = s.ok;
  j["bad_reasons"] = s.bad_reasons;
  j["bad_images"] = s.bad_images;
  std::string hdr = j.dump();
  uint64_t len = hdr.size();
  std::string out(kMagic, 8);
  out.append(reinterpret_cast<const char*>(&len), 8);
  out += hdr;
  auto d = s.data.contiguous();
  out.append(static_cast<const char*>(d.data_ptr()), size_t(d.numel() * d.element_size()));
  fs::create_directories(fs::path(path).parent_path());
  io::write_file_atomic(path, out);
}

}  // namespace

int64_t FeatureStore::good() const {
  int64_t n = 0;
  for (auto v : ok) n += v;
  return n;
}

at::Tensor linear_patch_features(const at::Tensor& pixels, int64_t grid) {
  auto p = cut_patches(normalize_imagenet(pixels), grid);  // [N,P,3,p,p]
  return p.reshape({p.size(0), p.size(1), -1});
}

at::Tensor FeatureStore::patches(const std::vector<int64_t>& rows) const {
  auto idx = torch::tensor(rows, torch::kLong);
  auto picked = data.index_select(0, idx);
  if (enc.name == "resnet50") return picked.to(torch::kFloat);
  return linear_patch_features(picked, enc.image.grid);
}

FeatureStore load_or_extract(const PairTable& t, const EncoderOptions& enc, const std::string& dir,
                             bool strict, int threads) {
  FeatureStore s;
  s.enc = enc;
  const std::string key = cache_key(t, enc), path = cache_path(t, enc, dir);
  if (read_cache(path, key, s)) return s;

  auto start = std::chrono::steady_clock::now();
  const int64_t N = static_cast<int64_t>(t.size()), S = enc.image.size;
  at::Tensor pixels = torch::zeros({N, 3, S, S}, torch::kUInt8);
  std::vector<std::string> reason(static_cast<size_t>(N));
  s.ok.assign(size_t(N), 0);
  {
    at::set_num_threads(1);  // the decode workers are the parallelism; no nested OpenMP teams
    tbb::parallel_for(int64_t(0), N, [&](int64_t i) {
      bool readable = false;
      std::string bytes = read_bytes(t.image[size_t(i)], readable);
      if (!readable) {
        reason[size_t(i)] = "cannot open the file";
        return;
      }
      auto img = decode_image(bytes, reason[size_t(i)]);
      if (!img) return;
      if (std::min(img->size(1), img->size(2)) < enc.image.grid) {
        reason[size_t(i)] = "too small (" + std::to_string(img->size(2)) + "x" +
                            std::to_string(img->size(1)) + ") for a " + std::to_string(enc.image.grid) + "x" +
                            std::to_string(enc.image.grid) + " grid";
        return;
      }
      pixels[i].copy_(resize_center_crop(*img, S));
      s.ok[size_t(i)] = 1;
    });
    at::set_num_threads(threads);
  }
  for (int64_t i = 0; i < N; ++i) {
    if (s.ok[size_t(i)]) continue;
    const std::string what = t.image[size_t(i)] + " (" + t.path + ":" + std::to_string(t.line[size_t(i)]) +
                             "): " + reason[size_t(i)];
    if (strict)
      throw DataError("bad image: " + reason[size_t(i)], t.image[size_t(i)],
                      "fix or remove the row, or unset data.strict to skip bad images");
    ++s.bad_images;
    if (s.bad_reasons.size() < 5) s.bad_reasons.push_back(what);
  }
  if (enc.name == "resnet50") {
    if (enc.weights.empty())
      throw ConfigError("the resnet50 patch encoder needs weights", "image.encoder_weights",
                        "give a torchvision resnet50 state dict (.pth or .safetensors), or use "
                        "image.encoder = \"patch_linear\"");
    ResNet50 net;
    load_resnet50(net, enc.weights);
    net->eval();
    torch::NoGradGuard ng;
    const int64_t P = enc.image.num_patches(), p = enc.image.patch_pixels();
    at::Tensor feats = torch::zeros({N, P, 2048}, torch::kHalf);
    for (int64_t b = 0; b < N; b += enc.batch_images) {
      const int64_t e = std::min(N, b + enc.batch_images);
      auto x = cut_patches(normalize_imagenet(pixels.slice(0, b, e)), enc.image.grid);  // [n,P,3,p,p]
      auto y = net->forward(x.reshape({-1, 3, p, p})).reshape({e - b, P, 2048});
      feats.slice(0, b, e).copy_(y.to(torch::kHalf));
    }
    s.data = feats;
  } else {
    s.data = pixels;
  }
  s.extract_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_cache(path, key, s);
  return s;
}

}  // namespace et::apps::fashionbert
