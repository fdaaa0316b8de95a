// cli_internal.h: the host command implementations shared between the host's CLI files.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "options.h"
#include "plugin/plugin_index.h"

namespace et::host {

// Parses a subcommand's argv (argv[0] is the subcommand word); a bad flag is an et::UsageError naming
// `command`.
boost::program_options::variables_map parse_subcommand(
    int argc, const char* const* argv, const boost::program_options::options_description& desc,
    const std::string& command);

int cmd_list(const PluginIndex& index, bool json, bool verbose);
// `--describe <kind>/<name>`; format "markdown" prints only the config keys, as a Markdown table (for docs);
// a non-empty `section` keeps the keys under it ("distill": distill.*).
int cmd_describe(const PluginIndex& index, const std::string& what, const std::string& format = "text",
                 const std::string& section = "");
int cmd_check_plugins(const PluginIndex& index);
int cmd_run_app(const PluginIndex& index, const HostOptions& opts);
int cmd_version();
// `ethost tokenize ...` (argv without the subcommand word).
int cmd_tokenize(int argc, const char* const* argv);
// Appends `s` as a JSON string literal (quotes, escapes; \uXXXX for other control characters).
void put_json_string(std::string& out, const std::string& s);
// `ethost doctor ...`: CPU, BLAS core, threads, oneDNN, GEMM peaks (argv without the subcommand word).
int cmd_doctor(int argc, const char* const* argv);
// `ethost segment [--dict FILE]`: jieba-style word segmentation of stdin lines.
int cmd_segment(int argc, const char* const* argv);
// `ethost kg --kg FILE`: knowledge-graph entity mentions of stdin lines (docs/apps/kgbert.md).
int cmd_kg(int argc, const char* const* argv);

}  // namespace et::host
