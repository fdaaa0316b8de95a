// commands.cpp: dispatches the host's command line to a command.
#include "commands.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli_internal.h"
#include "ethost/error.h"
#include "ethost/log.h"

namespace et::host {

boost::program_options::variables_map parse_subcommand(
    int argc, const char* const* argv, const boost::program_options::options_description& desc,
    const std::string& command) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what(), command, "see `" + command + " --help`");
  }
  return vm;
}

int run_host(int argc, const char* const* argv) {
  if (argc >= 2 && std::strcmp(argv[1], "tokenize") == 0) return cmd_tokenize(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "doctor") == 0) return cmd_doctor(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "segment") == 0) return cmd_segment(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "kg") == 0) return cmd_kg(argc - 1, argv + 1);

  HostOptions o = parse_options(argc, argv);
  if (o.log_level)
    log::set_level(log::parse_level(*o.log_level));
  else if (const char* env = std::getenv("ET_LOG_LEVEL"))
    log::set_level(log::parse_level(env));
  else if (o.verbose)
    log::set_level(log::Level::debug);

  if (o.help || argc <= 1) {
    std::cout << usage_text();
    return argc <= 1 ? kExitUsage : kExitOk;
  }
  if (o.version) return cmd_version();
  if (o.launch.nproc_per_node > 0 && !std::getenv("ETHOST_LAUNCHED"))
    return launch_workers(o.launch, argc, argv);

  PluginIndex index;
  index.scan(make_search_path(o.plugin_dirs, o.no_default_plugins));
  if (o.verbose) {
    auto lg = log::get("host");
    for (auto& f : index.files())
      if (f->skipped) lg.debug("skipped ", f->path, ": ", f->problem);
  }
  if (o.list) return cmd_list(index, o.json, o.verbose);
  if (!o.describe.empty()) return cmd_describe(index, o.describe, o.format, o.section);
  if (o.check_plugins) return cmd_check_plugins(index);
  if (!o.app.empty()) return cmd_run_app(index, o);
  throw UsageError("nothing to do", "command line", "give --app <name>, --list, --describe or --help");
}

}  // namespace et::host
