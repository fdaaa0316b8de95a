// options.cpp: command-line parsing for the host.
#include "options.h"

#include <boost/program_options.hpp>
#include <sstream>

#include "ethost/error.h"

namespace po = boost::program_options;

namespace et::host {

const std::vector<FlagAlias>& easynlp_aliases() {
  static const std::vector<FlagAlias> aliases = {
      {"tables", "data.tables", "comma-separated input files (train,dev for train mode)"},
      {"input_schema", "data.input_schema", "column schema name:type:length,..."},
      {"first_sequence", "data.first_sequence", "column holding the (first) text"},
      {"second_sequence", "data.second_sequence", "column holding the second text of a pair"},
      {"label_name", "data.label_name", "column holding the label"},
      {"label_enumerate_values", "data.label_enumerate_values", "labels, comma-separated, or a file"},
      {"skip_first_line", "data.skip_first_line", "skip a header line"},
      {"sequence_length", "data.sequence_length", "maximum tokens per example"},
      {"checkpoint_dir", "train.checkpoint_dir", "where models, logs and checkpoints go"},
      {"epoch_num", "train.epoch_num", "number of epochs"},
      {"micro_batch_size", "train.micro_batch_size", "examples per step and process"},
      {"random_seed", "train.seed", "random seed"},
      {"save_checkpoint_steps", "train.save_checkpoint_steps", "checkpoint every N steps"},
      {"gradient_accumulation_steps", "train.gradient_accumulation_steps", "micro-batches per update"},
      {"logging_steps", "train.logging_steps", "log every N steps"},
      {"max_grad_norm", "train.max_grad_norm", "gradient clipping norm"},
      {"warmup_proportion", "train.warmup_proportion", "fraction of steps for LR warmup"},
      {"resume_from_checkpoint", "train.resume_from_checkpoint", "resume from a checkpoint directory"},
      {"learning_rate", "optimizer.learning_rate", "peak learning rate"},
      {"weight_decay", "optimizer.weight_decay", "decoupled weight decay"},
      {"outputs", "predict.outputs", "prediction output file"},
      {"output_schema", "predict.output_schema", "prediction columns"},
      {"append_cols", "predict.append_cols", "input columns copied to the prediction output"},
  };
  return aliases;
}

namespace {

po::options_description make_options(HostOptions& o, std::vector<std::string>& sets, std::string& udp,
                                     std::string& level, int& threads) {
  po::options_description general("General");
  general.add_options()("help,h", po::bool_switch(&o.help), "show this help")(
      "version", po::bool_switch(&o.version), "print host version, SDK ABI, LibTorch version, build type")(
      "list", po::bool_switch(&o.list), "list plugins and their components (reads manifests only)")(
      "json", po::bool_switch(&o.json), "with --list: print JSON")(
      "describe", po::value(&o.describe), "describe a component: <kind>/<name>, e.g. app/hello")(
      "format", po::value(&o.format),
      "with --describe: text (default) or markdown (the config keys as a Markdown table, for docs)")(
      "section", po::value(&o.section), "with --describe: only the keys of this section, e.g. distill")(
      "check-plugins", po::bool_switch(&o.check_plugins),
      "load every plugin in a separate probe process and report")(
      "verbose,v", po::bool_switch(&o.verbose), "also report skipped files and debug details")(
      "log-level", po::value(&level), "trace|debug|info|warn|error|off (also ET_LOG_LEVEL)")(
      "threads", po::value(&threads), "LibTorch intra-op threads (0 = all cores)");
  po::options_description run("Running an app");
  run.add_options()("app", po::value(&o.app), "the app to run, e.g. text_classify")(
      "mode", po::value(&o.mode), "train|evaluate|predict|serve (default train)")(
      "config", po::value(&o.config_file), "TOML config file")(
      "set", po::value(&sets)->composing(), "override a config key: --set train.max_steps=20 (repeatable)")(
      "dump-config", po::bool_switch(&o.dump_config), "print the resolved config as TOML and exit");
  po::options_description plugins("Plugins");
  plugins.add_options()("plugin-dir", po::value(&o.plugin_dirs)->composing(),
                        "search this directory first (repeatable)")(
      "no-default-plugins", po::bool_switch(&o.no_default_plugins),
      "do not search <exe dir>/plugins and <prefix>/lib/ethost/plugins");
  po::options_description dist("Multi-process (torchrun's contract; workers get RANK, WORLD_SIZE, ...)");
  dist.add_options()("nproc_per_node", po::value(&o.launch.nproc_per_node),
                     "start N worker processes on this node")("nnodes", po::value(&o.launch.nnodes),
                                                              "number of nodes (default 1)")(
      "node_rank", po::value(&o.launch.node_rank), "this node's index (default 0)")(
      "master_addr", po::value(&o.launch.master_addr), "rendezvous host (default 127.0.0.1)")(
      "master_port", po::value(&o.launch.master_port), "rendezvous port (default: a free port on one node)")(
      "worker_timeout", po::value(&o.launch.worker_timeout),
      "seconds the workers get to stop after one fails, another node fails or the launcher is signalled, "
      "before SIGKILL (default 30)")(
      "rendezvous_timeout", po::value(&o.launch.rendezvous_timeout),
      "seconds to wait for every node and rank to arrive before failing, naming the missing ones (default: "
      "distributed.rendezvous_timeout_s, 300)");
  po::options_description easy("EasyNLP-compatible flags (each sets a config key; see docs/cli.md)");
  for (auto& a : easynlp_aliases()) easy.add_options()(a.flag, po::value<std::string>(), a.doc);
  easy.add_options()("user_defined_parameters", po::value(&udp), "\"k=v k=v\": set keys by name");
  po::options_description all;
  all.add(general).add(run).add(plugins).add(dist).add(easy);
  return all;
}

}  // namespace

std::string usage_text() {
  HostOptions o;
  std::vector<std::string> sets;
  std::string udp, level;
  int threads = 0;
  std::ostringstream os;
  os << "Usage: ethost --app <name> [--mode train|evaluate|predict|serve] [--config file.toml] [--set "
        "k=v]...\n"
        "       ethost --list [--json] | --version\n"
        "       ethost --describe <kind>/<name> [--section s] [--format markdown]   (its config keys)\n"
        "       ethost tokenize --vocab vocab.txt [--pair] [--max_length N] < input\n"
        "       ethost doctor [--json]   (CPU, BLAS core, threads, GEMM peaks: paste it into bug reports)\n"
        "       ethost segment [--dict dict.txt] < input   (Chinese words, as jieba's cut with HMM off)\n"
        "       ethost kg --kg graph.spo [--json] < input   (knowledge-graph entity mentions, longest "
        "match)\n"
     << make_options(o, sets, udp, level, threads);
  return os.str();
}

HostOptions parse_options(int argc, const char* const* argv) {
  HostOptions o;
  std::vector<std::string> sets;
  std::string udp, level;
  int threads = -1;
  auto desc = make_options(o, sets, udp, level, threads);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what(), "command line", "see ethost --help");
  }
  if (vm.count("log-level")) o.log_level = level;
  if (vm.count("nproc_per_node") && o.launch.nproc_per_node < 1)
    throw UsageError("--nproc_per_node must be >= 1, got " + std::to_string(o.launch.nproc_per_node),
                     "command line",
                     "give the number of worker processes per node, or leave the flag out for one process");
  if (vm.count("worker_timeout") && !(o.launch.worker_timeout > 0))
    throw UsageError("--worker_timeout must be > 0 seconds", "command line");
  if (vm.count("rendezvous_timeout") && !(o.launch.rendezvous_timeout > 0))
    throw UsageError("--rendezvous_timeout must be > 0 seconds", "command line");
  if (vm.count("threads")) {
    if (threads < 0) throw UsageError("--threads must be >= 0", "command line");
    o.threads = threads;
  }
  for (auto& a : easynlp_aliases())
    if (vm.count(a.flag))
      o.sets.emplace_back(a.key, vm[a.flag].as<std::string>(), std::string("--") + a.flag);
  for (auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set expects key=value, got '" + s + "'", "command line",
                       "for example --set train.max_steps=20");
    o.sets.emplace_back(s.substr(0, eq), s.substr(eq + 1), "--set " + s.substr(0, eq));
  }
  if (!udp.empty()) {
    std::istringstream is(udp);
    std::string kv;
    while (is >> kv) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError("--user_defined_parameters expects k=v pairs, got '" + kv + "'", "command line");
      o.user_params.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  if (o.format != "text" && o.format != "markdown")
    throw UsageError("unknown --format '" + o.format + "'", "command line", "use text or markdown");
  for (const char* flag : {"format", "section"})
    if (vm.count(flag) && o.describe.empty())
      throw UsageError(std::string("--") + flag + " applies to --describe only", "command line",
                       "for example --describe app/text_classify --section distill --format markdown");
  if (o.mode != "train" && o.mode != "evaluate" && o.mode != "predict" && o.mode != "serve")
    throw UsageError("unknown --mode '" + o.mode + "'", "command line",
                     "use train, evaluate, predict or serve");
  return o;
}

}  // namespace et::host
