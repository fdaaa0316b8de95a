// describe_cmd.cpp: `ethost --describe <kind>/<name> [--format markdown]` — a component and its config keys.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli_internal.h"
#include "ethost/error.h"

namespace et::host {

namespace {

// One config key as printed: key, type, default, and the doc with its choices and range.
struct KeyRow {
  std::string key, type, def, doc, choices, range;
};

std::string number(double x) {
  std::ostringstream n;
  n << x;
  return n.str();
}

// A default as TOML text a reader can see: a literal string holding a control character (the tab of
// reader/tsv's delimiter) becomes a basic string with escapes ("\t").
std::string visible_default(const std::string& toml) {
  bool control = std::any_of(toml.begin(), toml.end(), [](char c) { return c >= 0 && c < 0x20; });
  if (!control || toml.size() < 2 || toml.front() != '\'' || toml.back() != '\'') return toml;
  std::string out;
  put_json_string(out, toml.substr(1, toml.size() - 2));  // JSON's escapes are TOML basic-string escapes too
  return out;
}

KeyRow key_row(const ConfigKeySpec& s) {
  KeyRow r;
  r.key = s.key;
  r.type = s.type == "component" ? "component(" + s.component_kind + ")" : s.type;
  r.def = s.required ? "(required)" : s.default_toml.empty() ? "(none)" : visible_default(s.default_toml);
  r.doc = s.doc;
  for (auto& x : s.choices) r.choices += (r.choices.empty() ? "" : "|") + x;
  if (s.min || s.max)
    r.range = "[" + (s.min ? number(*s.min) : "-inf") + ", " + (s.max ? number(*s.max) : "inf") + "]";
  return r;
}

void print_text_keys(const std::vector<KeyRow>& keys) {
  std::vector<std::vector<std::string>> rows = {{"KEY", "TYPE", "DEFAULT", "DOC"}};
  for (auto& k : keys) {
    std::string doc = k.doc;
    if (!k.choices.empty()) doc += " [" + k.choices + "]";
    if (!k.range.empty()) doc += " " + k.range;
    rows.push_back({k.key, k.type, k.def, doc});
  }
  std::vector<size_t> w(4, 0);
  for (auto& r : rows)
    for (size_t i = 0; i < 3; ++i) w[i] = std::max(w[i], r[i].size());
  for (auto& r : rows)
    std::cout << "  " << std::left << std::setw(int(w[0]) + 2) << r[0] << std::setw(int(w[1]) + 2) << r[1]
              << std::setw(int(w[2]) + 2) << r[2] << r[3] << "\n";
}

// A table cell: '|' escaped, newlines and tabs as spaces.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r' || c == '\t')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// Inline code that survives backticks and edge spaces inside the text (CommonMark's rule).
std::string code(const std::string& s) {
  if (s.empty()) return "";
  std::string ticks = "`";
  while (s.find(ticks) != std::string::npos) ticks += '`';
  bool pad = s.find('`') != std::string::npos || s.front() == ' ' || s.back() == ' ';
  return ticks + (pad ? " " : "") + cell(s) + (pad ? " " : "") + ticks;
}

// A doc text as a cell: also '<' outside code spans as "&lt;", so `create<Model>` is not read as an HTML tag.
std::string doc_cell(const std::string& s) {
  std::string out;
  bool in_code = false;
  for (char c : cell(s)) {
    if (c == '`') in_code = !in_code;
    out += c == '<' && !in_code ? std::string("&lt;") : std::string(1, c);
  }
  return out;
}

void print_markdown_keys(const std::vector<KeyRow>& keys) {
  if (keys.empty()) {
    std::cout << "*No config keys.*\n";
    return;
  }
  std::cout << "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (auto& k : keys) {
    std::string def = k.def == "(required)" || k.def == "(none)" ? k.def : code(k.def);
    std::string doc = doc_cell(k.doc);
    if (!k.choices.empty()) {
      std::string ch, item;
      std::istringstream is(k.choices);
      while (std::getline(is, item, '|')) ch += (ch.empty() ? "" : ", ") + code(item);
      doc += (doc.empty() ? "" : "; ") + std::string("one of ") + ch;
    }
    if (!k.range.empty()) doc += (doc.empty() ? "" : "; ") + std::string("range ") + k.range;
    std::cout << "| " << code(k.key) << " | " << k.type << " | " << def << " | " << doc << " |\n";
  }
}

}  // namespace

int cmd_describe(const PluginIndex& index, const std::string& what, const std::string& format,
                 const std::string& section) {
  auto slash = what.find('/');
  auto kind = parse_kind(slash == std::string::npos ? "" : what.substr(0, slash));
  if (!kind)
    throw UsageError("--describe expects <kind>/<name>, e.g. app/hello or model/bert", "command line");
  const ComponentEntry& c = index.require(*kind, what.substr(slash + 1));
  const ComponentDecl& d = *c.decl;
  std::vector<KeyRow> keys;
  for (auto& s : d.config)
    if (section.empty() || s.key.rfind(section + ".", 0) == 0) keys.push_back(key_row(s));
  if (!section.empty() && keys.empty())
    throw UsageError(d.key() + " has no keys in section '" + section + "'", "--section",
                     "ethost --describe " + d.key() + " lists every key");
  if (format == "markdown") {
    print_markdown_keys(keys);
    return kExitOk;
  }
  const Manifest& m = *c.file->manifest;
  std::cout << d.key() << " " << d.version << (d.description.empty() ? "" : " - " + d.description) << "\n";
  std::cout << "plugin:   " << m.id << " " << m.version << " (" << c.file->path << ")\n";
  std::string req;
  for (auto& r : d.requires_) req += (req.empty() ? "" : ", ") + r;
  std::cout << "requires: " << (req.empty() ? "(nothing)" : req) << "\n";
  std::cout << "config keys:\n";
  if (keys.empty())
    std::cout << "  (none)\n";
  else
    print_text_keys(keys);
  return kExitOk;
}

}  // namespace et::host
