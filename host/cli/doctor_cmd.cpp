// doctor_cmd.cpp: `ethost doctor` — what this machine runs ethost on (CPU, BLAS core, threads, oneDNN, GEMM
// peaks).
#include <dlfcn.h>
#include <link.h>
#include <torch/torch.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_internal.h"
#include "cpu/blas_backend.h"
#include "ethost/error.h"
#include "ethost/version.h"

namespace po = boost::program_options;

namespace et::host {
namespace {

struct DnnlVersion {
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};

// oneDNN's dnnl_cpu_isa_t values (oneDNN 2.x dnnl_types.h); the raw value is printed too.
std::string dnnl_isa_name(unsigned v) {
  switch (v) {
    case 0x1:
      return "sse41";
    case 0x3:
      return "avx";
    case 0x7:
      return "avx2";
    case 0x407:
      return "avx2_vnni";
    case 0xf:
      return "avx512_mic";
    case 0x1f:
      return "avx512_mic_4ops";
    case 0x27:
      return "avx512_core";
    case 0x67:
      return "avx512_core_vnni";
    case 0xe7:
      return "avx512_core_bf16";
    case 0x3e7:
      return "avx512_core_amx";
    default:
      return "unknown";
  }
}

// The OpenMP runtime loaded in this process (libgomp, LLVM libomp or Intel libiomp5).
std::string openmp_runtime() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        auto* out = static_cast<std::string*>(data);
        for (const char* lib : {"libgomp", "libiomp5", "libomp"})
          if (name.find(std::string("/") + lib) != std::string::npos && out->empty()) *out = name;
        return 0;
      },
      &found);
  if (found.empty()) return "none loaded";
  std::string kind = found.find("libgomp") != std::string::npos    ? "GNU libgomp"
                     : found.find("libiomp5") != std::string::npos ? "Intel libiomp5"
                                                                   : "LLVM libomp";
  return kind + " (" + found + ")";
}

// Best GFLOP/s of an n×n×n matmul over a time budget (after one warm-up call).
double gemm_peak(at::ScalarType dtype, int64_t n, double budget_s) {
  auto a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  auto c = at::mm(a, b);
  double best = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * n / s / 1e9);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s) break;
  }
  return best;
}

std::string fmt1(double v) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << v;
  return s.str();
}

// oneDNN as loaded in this process (via ATen): version and the ISA it dispatches to.
nlohmann::json onednn_info() {
  nlohmann::json dnnl = {{"loaded", false}};
  if (auto ver = reinterpret_cast<const DnnlVersion* (*)()>(dlsym(RTLD_DEFAULT, "dnnl_version"))) {
    const DnnlVersion* v = ver();
    dnnl["loaded"] = true;
    dnnl["version"] =
        std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    if (auto isa = reinterpret_cast<unsigned (*)()>(dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"))) {
      unsigned raw = isa();
      dnnl["isa"] = dnnl_isa_name(raw);
      dnnl["isa_value"] = raw;
    }
  }
  return dnnl;
}

// Everything the doctor reports, as the --json object (the text form prints from it).
nlohmann::json doctor_report(const cpu::CpuInfo& cpu, const cpu::BlasInfo& blas, bool no_gemm) {
  nlohmann::json j;
  j["ethost"] = ET_VERSION_STRING;
  j["libtorch"] = TORCH_VERSION;
  j["cpu"] = {{"vendor", cpu.vendor},          {"model_name", cpu.model_name},
              {"family", cpu.family},          {"model", cpu.model},
              {"stepping", cpu.stepping},      {"logical_cores", std::thread::hardware_concurrency()},
              {"features", cpu.feature_list()}};
  const char* user_core = std::getenv("OPENBLAS_CORETYPE");
  j["blas"] = {{"openblas", blas.openblas},
               {"core", blas.corename},
               {"config", blas.config},
               {"threading", blas.threading},
               {"library", blas.library},
               {"summary", cpu::blas_summary()},
               {"OPENBLAS_CORETYPE", user_core ? user_core : ""}};
  j["threads"] = {{"openmp_runtime", openmp_runtime()},
                  {"intra_op", at::get_num_threads()},
                  {"inter_op", at::get_num_interop_threads()}};
  j["onednn"] = onednn_info();
  j["mkldnn_in_aten"] = at::hasMKLDNN();

  // torch 1.13 runs bf16 at::mm through oneDNN only on AVX-512 (BW/VL/DQ); elsewhere ATen's generic loop.
  std::string bf16_path = cpu.avx512_core() ? (cpu.avx512_bf16 ? "oneDNN, native AVX512-BF16"
                                                               : "oneDNN, bf16 emulated with AVX-512")
                                            : "ATen fallback (no AVX-512): bf16 GEMM is slower than fp32";
  j["paths"] = {{"bf16", bf16_path},
                {"amx", cpu.amx_tile && cpu.amx_bf16 ? "present (oneDNN uses it for bf16/int8)" : "absent"},
                {"vnni", cpu.avx512_vnni ? "AVX512-VNNI"
                         : cpu.avx_vnni  ? "AVX-VNNI"
                                         : "absent"}};
  if (!no_gemm) {
    double fp32 = gemm_peak(at::kFloat, 1024, 1.5);
    // bf16 on the ATen fallback runs at ~1 GFLOP/s: a smaller problem keeps the doctor within seconds.
    double bf16 = gemm_peak(at::kBFloat16, cpu.avx512_core() ? 1024 : 256, 1.5);
    j["gemm_gflops"] = {{"fp32", fp32},
                        {"bf16", bf16},
                        {"fp32_shape", "1024x1024x1024"},
                        {"bf16_shape", cpu.avx512_core() ? "1024x1024x1024" : "256x256x256"}};
  }
  // NCCL comes only with a CUDA build of LibTorch (sdk/src/dist/process_group.cpp refuses backend nccl
  // otherwise).
  j["cuda"] = {{"libtorch_cuda", at::hasCUDA()}, {"nccl", at::hasCUDA()}};
  return j;
}

// The text form of the report, one aligned line per topic.
void print_doctor_text(const nlohmann::json& j, const cpu::CpuInfo& cpu, const cpu::BlasInfo& blas,
                       int threads) {
  std::cout << "ethost " << ET_VERSION_STRING << ", LibTorch " << TORCH_VERSION << "\n"
            << "CPU:      " << (cpu.model_name.empty() ? "unknown" : cpu.model_name) << " (" << cpu.vendor
            << " family " << cpu.family << " model " << cpu.model << " stepping " << cpu.stepping << "), "
            << std::thread::hardware_concurrency() << " logical cores\n"
            << "features: " << cpu.feature_list() << "\n"
            << "BLAS:     " << j["blas"]["summary"].get<std::string>() << "\n";
  if (!blas.library.empty()) std::cout << "          " << blas.library << "\n";
  if (!blas.config.empty()) std::cout << "          " << blas.config << "\n";
  std::cout << "OpenMP:   " << openmp_runtime() << "\n"
            << "threads:  intra-op " << at::get_num_threads() << ", inter-op "
            << at::get_num_interop_threads() << "\n";
  const nlohmann::json& dnnl = j["onednn"];
  if (dnnl["loaded"].get<bool>())
    std::cout << "oneDNN:   " << dnnl["version"].get<std::string>() << ", ISA "
              << dnnl.value("isa", std::string("unknown")) << "\n";
  else
    std::cout << "oneDNN:   not loaded\n";
  std::cout << "bf16:     " << j["paths"]["bf16"].get<std::string>() << "\n"
            << "AMX:      " << j["paths"]["amx"].get<std::string>() << "\n"
            << "VNNI:     " << j["paths"]["vnni"].get<std::string>() << "\n";
  if (j.contains("gemm_gflops"))
    std::cout << "GEMM:     fp32 " << fmt1(j["gemm_gflops"]["fp32"]) << " GFLOP/s (1024^3), bf16 "
              << fmt1(j["gemm_gflops"]["bf16"]) << " GFLOP/s ("
              << j["gemm_gflops"]["bf16_shape"].get<std::string>() << "), " << threads << " threads\n";
  std::cout << "CUDA:     " << (at::hasCUDA() ? "available" : "not in this LibTorch build (CPU only)")
            << "; NCCL " << (at::hasCUDA() ? "with it" : "unavailable (distributed.backend = gloo)") << "\n";
}

}  // namespace

int cmd_doctor(int argc, const char* const* argv) {
  po::options_description desc("ethost doctor");
  int threads = 0;
  bool json = false, no_gemm = false;
  desc.add_options()("help,h", "this help")("json", po::bool_switch(&json), "print one JSON object")(
      "threads", po::value<int>(&threads),
      "intra-op threads (default: as `ethost --app` would use: all cores)")(
      "no-gemm", po::bool_switch(&no_gemm), "skip the GEMM peak measurement");
  auto vm = parse_subcommand(argc, argv, desc, "ethost doctor");
  if (vm.count("help")) {
    std::cout << "usage: ethost doctor [--json] [--threads N] [--no-gemm]\n"
              << "Prints what ethost runs on; paste it into bug reports.\n"
              << desc;
    return kExitOk;
  }
  if (threads < 0)
    throw UsageError("--threads must be >= 0", "ethost doctor --threads", "give a thread count");
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);

  auto cpu = cpu::detect_cpu();
  auto blas = cpu::query_blas();
  nlohmann::json j = doctor_report(cpu, blas, no_gemm);
  if (json)
    std::cout << j.dump(2) << "\n";
  else
    print_doctor_text(j, cpu, blas, threads);
  return kExitOk;
}

}  // namespace et::host
