// tokenize_cmd.cpp: `ethost tokenize` — WordPiece-tokenizes stdin lines, prints JSON (docs/tokenizer.md).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_internal.h"
#include "ethost/error.h"
#include "ethost/text/tokenizer.h"

namespace po = boost::program_options;

namespace et::host {

void put_json_string(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

namespace {

constexpr std::size_t kBatchLines = 4096;

void put_ints(std::string& out, const char* key, const std::vector<int64_t>& v) {
  out += ", \"";
  out += key;
  out += "\": [";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(v[i]);
  }
  out += "]";
}

// One line of output, formatted like Python's json.dumps(..., ensure_ascii=False).
void put_encoding(std::string& out, const text::Encoding& e) {
  out += "{\"tokens\": [";
  for (std::size_t i = 0; i < e.tokens.size(); ++i) {
    if (i) out += ", ";
    put_json_string(out, e.tokens[i]);
  }
  out += "]";
  put_ints(out, "input_ids", e.input_ids);
  put_ints(out, "token_type_ids", e.token_type_ids);
  put_ints(out, "attention_mask", e.attention_mask);
  out += ", \"offsets\": [";
  for (std::size_t i = 0; i < e.offsets.size(); ++i) {
    if (i) out += ", ";
    out += "[" + std::to_string(e.offsets[i].first) + ", " + std::to_string(e.offsets[i].second) + "]";
  }
  out += "]";
  if (e.invalid_utf8) out += ", \"invalid_utf8\": " + std::to_string(e.invalid_utf8_count);
  out += "}\n";
}

struct TokenizeOptions {
  std::string vocab, model_dir;
  bool cased = false, pair = false, no_padding = false, help = false;
  int64_t max_length = -1;
};

po::options_description make_options(TokenizeOptions& o) {
  po::options_description d("ethost tokenize options");
  // clang-format off
  d.add_options()
      ("help,h", po::bool_switch(&o.help), "show this help")
      ("vocab", po::value(&o.vocab), "BERT vocab.txt (overrides the one of --model_dir)")
      ("model_dir", po::value(&o.model_dir), "directory with vocab.txt and tokenizer_config.json")
      ("cased", po::bool_switch(&o.cased), "do not lower-case (nor strip accents)")
      ("pair", po::bool_switch(&o.pair), "lines are text_a<TAB>text_b")
      ("max_length", po::value(&o.max_length), "truncate (longest_first) and pad to N tokens")
      ("no_padding", po::bool_switch(&o.no_padding), "with --max_length: truncate only");
  // clang-format on
  return d;
}

text::Tokenizer make_tokenizer(const TokenizeOptions& o) {
  text::TokenizerOptions opts;
  text::Vocab vocab;
  if (!o.model_dir.empty()) {
    auto from_dir = text::Tokenizer::from_model_dir(o.model_dir);
    opts = from_dir.options();
    vocab = o.vocab.empty() ? from_dir.vocab() : text::Vocab::from_file(o.vocab);
  } else {
    vocab = text::Vocab::from_file(o.vocab);
  }
  if (o.cased) opts.do_lower_case = false;
  if (o.max_length >= 0) opts.max_length = o.max_length;
  opts.pad_to_max_length = !o.no_padding;
  return text::Tokenizer(std::move(vocab), std::move(opts));
}

void flush_batch(const text::Tokenizer& tok, bool pair, std::vector<std::string>& lines,
                 std::size_t first_line) {
  std::vector<text::Encoding> enc;
  if (pair) {
    std::vector<std::pair<std::string, std::string>> pairs;
    pairs.reserve(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      auto tab = lines[i].find('\t');
      if (tab == std::string::npos)
        throw DataError("--pair expects text_a<TAB>text_b, found no tab",
                        "stdin line " + std::to_string(first_line + i));
      pairs.emplace_back(lines[i].substr(0, tab), lines[i].substr(tab + 1));
    }
    enc = tok.encode_batch(pairs);
  } else {
    enc = tok.encode_batch(lines);
  }
  std::string out;
  out.reserve(enc.size() * 256);
  for (auto& e : enc) put_encoding(out, e);
  std::fwrite(out.data(), 1, out.size(), stdout);
  lines.clear();
}

}  // namespace

int cmd_tokenize(int argc, const char* const* argv) {
  TokenizeOptions o;
  auto desc = make_options(o);
  auto vm = parse_subcommand(argc, argv, desc, "ethost tokenize");
  if (o.help) {
    std::cout
        << "Usage: ethost tokenize (--vocab vocab.txt | --model_dir DIR) [--cased] [--pair] [--max_length N]"
           " < lines\nPrints one JSON object per input line (see docs/tokenizer.md).\n"
        << desc;
    return kExitOk;
  }
  if (o.vocab.empty() && o.model_dir.empty())
    throw UsageError("no vocabulary given", "ethost tokenize", "pass --vocab vocab.txt or --model_dir DIR");
  if (vm.count("max_length") && o.max_length < 0)
    throw UsageError("--max_length must be >= 0", "ethost tokenize");
  const text::Tokenizer tok = make_tokenizer(o);

  std::vector<std::string> lines;
  std::string line;
  std::size_t line_no = 0, first = 1;
  while (std::getline(std::cin, line)) {
    if (lines.empty()) first = line_no + 1;
    ++line_no;
    lines.push_back(std::move(line));
    if (lines.size() == kBatchLines) flush_batch(tok, o.pair, lines, first);
  }
  if (!lines.empty()) flush_batch(tok, o.pair, lines, first);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace et::host
