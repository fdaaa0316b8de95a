// open_tables.h: et::io::open_tables — Reader::open for files listed by a config key other than data.tables,
// so a file that cannot be opened names that key in its hint.
#pragma once

#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/error.h"
#include "ethost/reader.h"

namespace et::io {

// Opens `files` with `reader`. A reader's "cannot open" DataError hints "check data.tables"; here the files
// came from `key` of `root`, so the error is re-thrown (still a DataError, exit 4) with "check <key>
// (<origin>)".
inline void open_tables(Reader& reader, const std::vector<std::string>& files, const ConfigView& root,
                        const std::string& key) {
  try {
    reader.open(files);
  } catch (const DataError& e) {
    const std::string origin = root.where(key);
    throw DataError(e.bare_what(), e.where(), "check " + key + (origin.empty() ? "" : " (" + origin + ")"));
  }
}

}  // namespace et::io
