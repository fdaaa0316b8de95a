// pairs.h: the image–text pair tables (the layout of fashion_product_images/pairs.tsv: a header naming id,
// image, title, masterCategory, subCategory, ...; image paths relative to the TSV's folder), with bad rows
// counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace et::apps::fashionbert {

struct PairTable {
  std::string path;
  std::vector<std::string> id, image, title, master, sub;  // image: resolved path
  std::vector<int64_t> line;                               // 1-based line in the file
  std::vector<std::vector<std::string>> extra;             // every column of the row (for append_cols)
  std::vector<std::string> header;
  int64_t bad_rows = 0;
  std::vector<std::string> bad_examples;  // the first few "line N: reason"
  size_t size() const { return id.size(); }
};

// Reads a pair table. Missing id/image/title columns are a DataError naming the file and the columns it
// has; masterCategory/subCategory may be absent (then empty). A row with the wrong number of fields or an
// empty image or title is skipped and counted (strict: a DataError).
PairTable read_pair_table(const std::string& path, bool strict);

}  // namespace et::apps::fashionbert
