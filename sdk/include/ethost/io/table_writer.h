// table_writer.h: et::io::TableWriter — writes rows of text cells as a delimited table (TSV by default), with
// a per-column escaping rule and an optional header line; the predict output and any app's tables use it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::io {

// How a cell's text is made safe for a delimited line.
enum class CellEscape {
  none,    // written as it is: the producer guarantees no delimiter or line break (numbers, ids, JSON from
           // dump())
  spaces,  // the delimiter, '\t', '\r' and '\n' become spaces (free text copied from the input)
};

struct TableColumn {
  std::string name;
  CellEscape escape = CellEscape::spaces;
};

struct TableWriterOptions {
  bool header = false;  // write the column names (escaped with spaces) as the first line
  char delimiter = '\t';
  std::string shown_as;            // the file's name in errors (default: the path written), e.g. the final
                                   // path when writing a temporary file that is renamed afterwards
  std::string what = "the table";  // in errors: "cannot write <what>", "writing <what> failed"
};

// Lines end with "\n"; a row is its cells joined by the delimiter. Not thread-safe.
class ET_API TableWriter {
 public:
  // Opens (truncates) `path` and writes the header when asked. Throws et::DataError "<shown_as>: cannot write
  // <what>" when the file cannot be created.
  TableWriter(const std::string& path, std::vector<TableColumn> columns, TableWriterOptions options = {});
  ~TableWriter();  // closes the file; errors are only reported by close()
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // One row: one cell per column, in column order (another count throws et::InternalError).
  void write_row(const std::vector<std::string>& cells);
  // Flushes and closes the file; et::DataError "<shown_as>: writing <what> failed" when any write failed.
  void close();
  std::int64_t rows() const;
  const std::vector<TableColumn>& columns() const;

  // The cell as write_row writes it.
  static std::string escape(std::string cell, CellEscape how, char delimiter = '\t');

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::io
