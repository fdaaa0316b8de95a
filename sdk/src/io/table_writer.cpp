// table_writer.cpp: delimited tables (TSV) with per-column escaping, for predictions and app outputs.
#include "ethost/io/table_writer.h"

#include <fstream>

#include "ethost/error.h"

namespace et::io {

struct TableWriter::State {
  std::vector<TableColumn> columns;
  TableWriterOptions o;
  std::ofstream out;
  std::string line;
  std::int64_t rows = 0;
  bool closed = false;
};

TableWriter::TableWriter(const std::string& path, std::vector<TableColumn> columns,
                         TableWriterOptions options)
    : s_(std::make_unique<State>()) {
  s_->columns = std::move(columns);
  s_->o = std::move(options);
  if (s_->o.shown_as.empty()) s_->o.shown_as = path;
  s_->out.open(path, std::ios::binary | std::ios::trunc);
  if (!s_->out) throw DataError("cannot write " + s_->o.what, s_->o.shown_as);
  if (!s_->o.header) return;
  std::string& h = s_->line;
  h.clear();
  for (size_t i = 0; i < s_->columns.size(); ++i)
    h += (i ? std::string(1, s_->o.delimiter) : std::string()) +
         escape(s_->columns[i].name, CellEscape::spaces, s_->o.delimiter);
  s_->out << h << "\n";
}

TableWriter::~TableWriter() = default;

std::string TableWriter::escape(std::string cell, CellEscape how, char delimiter) {
  if (how == CellEscape::spaces)
    for (char& c : cell)
      if (c == delimiter || c == '\t' || c == '\n' || c == '\r') c = ' ';
  return cell;
}

void TableWriter::write_row(const std::vector<std::string>& cells) {
  if (cells.size() != s_->columns.size())
    throw InternalError("table row with " + std::to_string(cells.size()) + " cells for " +
                        std::to_string(s_->columns.size()) + " columns (" + s_->o.shown_as + ")");
  std::string& line = s_->line;
  line.clear();
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += s_->o.delimiter;
    if (s_->columns[i].escape == CellEscape::none)
      line += cells[i];
    else
      line += escape(cells[i], s_->columns[i].escape, s_->o.delimiter);
  }
  line += '\n';
  s_->out << line;
  ++s_->rows;
}

void TableWriter::close() {
  if (s_->closed) return;
  s_->closed = true;
  s_->out.close();
  if (!s_->out) throw DataError("writing " + s_->o.what + " failed", s_->o.shown_as);
}

std::int64_t TableWriter::rows() const { return s_->rows; }
const std::vector<TableColumn>& TableWriter::columns() const { return s_->columns; }

}  // namespace et::io
