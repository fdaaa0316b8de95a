// tokenizer_bench.cpp: ethost-tokenizer-bench — WordPiece throughput vs a pure-Python HF BertTokenizer.
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ethost/error.h"
#include "ethost/text/tokenizer.h"

namespace fs = std::filesystem;
using et::text::Encoding;
using et::text::Tokenizer;
using nlohmann::json;

namespace {

struct Args {
  std::string data_dir = ETHOST_SOURCE_DIR "/../shared/data";
  std::string vocab = ETHOST_SOURCE_DIR "/tests/fixtures/tokenizer/bert-base-chinese-vocab.txt";
  std::string python = "/usr/bin/python3";
  std::string baseline = ETHOST_SOURCE_DIR "/bench/baseline/tokenizer_baseline.py";
  std::string out = "tokenizer_bench.json";
  int reps = 5, py_reps = 1, threads = 0;
  bool no_python = false;
};

const char* kUsage =
    "Usage: ethost-tokenizer-bench [--data_dir DIR] [--vocab FILE] [--reps N] [--py_reps N] [--threads N]\n"
    "                              [--python EXE] [--baseline SCRIPT] [--no_python] [--out FILE.json]\n"
    "Tokenizes the \"sentence\", \"sentence1\", \"sentence2\", \"content\", \"text\" and \"abst\" fields of\n"
    "DIR/fewclue/*/*.json and DIR/ner/cluener2020/*.json (default DIR: <repo>/../shared/data).\n";

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw et::UsageError(k + " needs a value", "command line", kUsage);
      return argv[++i];
    };
    if (k == "--data_dir")
      a.data_dir = value();
    else if (k == "--vocab")
      a.vocab = value();
    else if (k == "--python")
      a.python = value();
    else if (k == "--baseline")
      a.baseline = value();
    else if (k == "--out")
      a.out = value();
    else if (k == "--reps")
      a.reps = std::max(1, std::stoi(value()));
    else if (k == "--py_reps")
      a.py_reps = std::max(1, std::stoi(value()));
    else if (k == "--threads")
      a.threads = std::max(0, std::stoi(value()));
    else if (k == "--no_python")
      a.no_python = true;
    else if (k == "--help" || k == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else
      throw et::UsageError("unknown argument '" + k + "'", "command line", kUsage);
  }
  return a;
}

std::vector<std::string> load_texts(const std::string& data_dir, std::size_t& files) {
  std::vector<fs::path> paths;
  const fs::path few = fs::path(data_dir) / "fewclue", ner = fs::path(data_dir) / "ner" / "cluener2020";
  if (!fs::is_directory(few) || !fs::is_directory(ner))
    throw et::DataError(
        "benchmark data not found: need " + few.string() + " and " + ner.string(), "--data_dir",
        "pass --data_dir <the shared data directory> (it holds fewclue/ and ner/cluener2020/)");
  for (auto& task : fs::directory_iterator(few))
    if (task.is_directory())
      for (auto& f : fs::directory_iterator(task.path()))
        if (f.path().extension() == ".json") paths.push_back(f.path());
  for (auto& f : fs::directory_iterator(ner))
    if (f.path().extension() == ".json") paths.push_back(f.path());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  files = 0;
  for (auto& p : paths) {
    std::ifstream in(p);
    bool used = false;
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object()) continue;  // label_distribution.json and friends are not JSON lines
      for (const char* key : {"sentence", "sentence1", "sentence2", "content", "text", "abst"})
        if (j.contains(key) && j[key].is_string()) {
          texts.push_back(j[key].get<std::string>());
          used = true;
        }
    }
    files += used;
  }
  return texts;
}

uint64_t fnv1a(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

// Same digest as the Python baseline: every id, then 0xFFFFFFFF after each text.
std::string digest(const std::vector<std::vector<int64_t>>& ids) {
  uint64_t h = 14695981039346656037ull;
  for (auto& v : ids) {
    for (auto x : v) h = fnv1a(h, static_cast<uint64_t>(x));
    h = fnv1a(h, 0xFFFFFFFFull);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw et::InternalError("cannot run " + cmd);
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) throw et::InternalError("command failed: " + cmd);
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string python_cmd(const Args& a, const std::string& texts, const std::string& extra) {
  return quote(a.python) + " " + quote(a.baseline) + " --vocab " + quote(a.vocab) + " --texts " +
         quote(texts) + " " + extra;
}

// Fairness check: the Python baseline, the C++ tokenizer and HF's reference ids agree on every reference
// case.
json verify_reference(const Args& a, const fs::path& tmp) {
  const std::string dir = ETHOST_SOURCE_DIR "/tests/fixtures/tokenizer/";
  json result;
  for (bool pair : {false, true}) {
    std::ifstream in(dir + (pair ? "tok_pairs_zh.max64.jsonl" : "tok_cases.zh.jsonl"));
    std::vector<json> refs;
    for (std::string line; std::getline(in, line);) refs.push_back(json::parse(line));
    std::ofstream f(tmp / "ref.jsonl");
    for (auto& r : refs) f << (pair ? json::array({r["text_a"], r["text_b"]}) : r["text"]).dump() << "\n";
    f.close();
    et::text::TokenizerOptions o;
    o.max_length = pair ? 64 : 0;
    o.pad_to_max_length = false;
    Tokenizer tok(et::text::Vocab::from_file(a.vocab), o);
    std::istringstream py(
        run_command(python_cmd(a, (tmp / "ref.jsonl").string(), pair ? "--max_length 64" : "")));
    std::size_t same = 0, i = 0;
    for (std::string line; std::getline(py, line) && i < refs.size(); ++i) {
      auto ids = json::parse(line)["input_ids"].get<std::vector<int64_t>>();
      const auto& r = refs[i];
      Encoding e = pair ? tok.encode(r["text_a"].get<std::string>(), r["text_b"].get<std::string>())
                        : tok.encode(r["text"].get<std::string>());
      same += ids == e.input_ids && ids == r["input_ids"].get<std::vector<int64_t>>();
    }
    result[pair ? "pairs" : "single"] = {{"cases", refs.size()}, {"identical", same}};
    std::cout << "reference check (" << (pair ? "zh pairs, max_length 64" : "zh single texts")
              << "): " << same << "/" << refs.size()
              << " identical ids in HF reference, C++ and Python baseline\n";
  }
  return result;
}

// CPU time of the calling thread: robust when other processes share the cores.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  std::vector<double> seconds;      // wall clock
  std::vector<double> cpu_seconds;  // thread CPU time, single-threaded runs only
  static double min(const std::vector<double>& v) {
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  }
  double best() const { return min(seconds); }
  double best_cpu() const { return min(cpu_seconds); }
};

std::string fmt(double x, int precision, const char* suffix = "") {
  if (x <= 0) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << x << suffix;
  return os.str();
}

// One table row and its JSON. Speed-ups compare best wall times and, for single-threaded runs, best CPU
// times.
json row(const std::string& name, int threads, const Timing& t, double bytes, double tokens,
         const Timing* py) {
  const double wall = t.best(), cpu = t.best_cpu();
  const double up = py ? py->best() / wall : 0, up_cpu = py && cpu > 0 ? py->best_cpu() / cpu : 0;
  json j = {{"impl", name},
            {"threads", threads},
            {"seconds", t.seconds},
            {"best_s", wall},
            {"mb_per_s", bytes / wall / 1e6},
            {"tokens_per_s", tokens / wall}};
  if (cpu > 0) {
    j["cpu_seconds"] = t.cpu_seconds;
    j["best_cpu_s"] = cpu;
    j["mb_per_cpu_s"] = bytes / cpu / 1e6;
  }
  if (py) j["speedup_vs_python"] = up;
  if (up_cpu > 0) j["speedup_vs_python_cpu"] = up_cpu;
  std::cout << std::left << std::setw(18) << name << std::right << std::setw(8) << threads << std::setw(6)
            << t.seconds.size() << std::setw(10) << fmt(wall, 3) << std::setw(10) << fmt(cpu, 3)
            << std::setw(10) << fmt(bytes / wall / 1e6, 2) << std::setw(10)
            << fmt(cpu > 0 ? bytes / cpu / 1e6 : 0, 2) << std::setw(10) << fmt(tokens / wall / 1e6, 2)
            << std::setw(11) << fmt(up, 1, "x") << std::setw(11) << fmt(up_cpu, 1, "x") << "\n";
  return j;
}

int run(const Args& a) {
  std::size_t files = 0;
  const auto texts = load_texts(a.data_dir, files);
  double bytes = 0;
  for (auto& t : texts) bytes += static_cast<double>(t.size());
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = a.threads > 0 ? a.threads : hw;
  std::cout << "data: " << texts.size() << " texts from " << files << " files under " << a.data_dir << ", "
            << std::setprecision(3) << bytes / 1e6 << " MB\nvocab: " << a.vocab << "\n";
  const Tokenizer tok = Tokenizer::from_vocab_file(a.vocab);
  const fs::path tmp = fs::temp_directory_path() / ("ethost-tokenizer-bench-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  json report = {{"data_dir", a.data_dir}, {"files", files},   {"texts", texts.size()},
                 {"bytes", bytes},         {"vocab", a.vocab}, {"hardware_threads", hw}};
  if (!a.no_python) report["reference_check"] = verify_reference(a, tmp);

  using clock = std::chrono::steady_clock;
  std::vector<std::vector<int64_t>> ids(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) ids[i] = tok.encode(texts[i]).input_ids;  // warm-up
  double tokens = 0;
  for (auto& v : ids) tokens += static_cast<double>(v.size());
  const std::string cpp_digest = digest(ids);
  Timing single, parallel;
  std::size_t sink = 0;
  for (int r = 0; r < a.reps; ++r) {
    auto t0 = clock::now();
    const double c0 = thread_cpu_seconds();
    for (auto& t : texts) sink += tok.encode(t).input_ids.size();
    single.cpu_seconds.push_back(thread_cpu_seconds() - c0);
    single.seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  tbb::task_arena arena(threads);
  for (int r = 0; r < a.reps; ++r) {
    std::vector<Encoding> out;
    auto t0 = clock::now();
    arena.execute([&] { out = tok.encode_batch(texts); });
    parallel.seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    for (auto& e : out) sink -= e.input_ids.size();
  }
  if (sink != 0) throw et::InternalError("serial and parallel runs produced different token counts");

  Timing py;
  json pyj;
  if (!a.no_python) {
    {
      std::ofstream f(tmp / "texts.jsonl");
      for (auto& t : texts) f << json(t).dump() << "\n";
    }
    std::cout << "running the Python baseline (" << a.py_reps << " repetition(s))...\n" << std::flush;
    pyj = json::parse(run_command(
        python_cmd(a, (tmp / "texts.jsonl").string(), "--mode bench --reps " + std::to_string(a.py_reps))));
    py.seconds = pyj["seconds"].get<std::vector<double>>();
    py.cpu_seconds = pyj["cpu_seconds"].get<std::vector<double>>();
  }
  fs::remove_all(tmp);

  std::cout << "\n"
            << std::left << std::setw(18) << "impl" << std::right << std::setw(8) << "threads" << std::setw(6)
            << "reps" << std::setw(10) << "wall s" << std::setw(10) << "cpu s" << std::setw(10) << "MB/s"
            << std::setw(10) << "MB/cpu-s" << std::setw(10) << "Mtok/s" << std::setw(11) << "vs Python"
            << std::setw(11) << "(cpu)"
            << "\n";
  const Timing* pyp = py.seconds.empty() ? nullptr : &py;
  json rows = json::array();
  rows.push_back(row("ethost C++", 1, single, bytes, tokens, pyp));
  rows.push_back(row("ethost C++ (TBB)", threads, parallel, bytes, tokens, pyp));
  if (pyp) rows.push_back(row("Python baseline", 1, py, bytes, tokens, nullptr));
  report["results"] = rows;
  report["tokens"] = tokens;
  report["cpp_digest"] = cpp_digest;
  if (!pyj.is_null()) {
    const bool same = pyj["digest"] == cpp_digest && pyj["tokens"].get<double>() == tokens;
    report["python"] = {{"version", pyj["python"]},
                        {"unicode", pyj["unicode"]},
                        {"digest", pyj["digest"]},
                        {"ids_identical", same}};
    std::cout << "\nids on the whole corpus: C++ digest " << cpp_digest << ", Python "
              << pyj["digest"].get<std::string>()
              << (same ? " (identical)" : " (DIFFERENT: the comparison is not like for like)") << "\n";
  }
  std::ofstream(a.out) << report.dump(2) << "\n";
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const et::Error& e) {
    std::cerr << "ethost-tokenizer-bench: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "ethost-tokenizer-bench: " << e.what() << "\n";
    return 1;
  }
}
