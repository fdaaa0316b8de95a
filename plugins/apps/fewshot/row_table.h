// row_table.h: rows of files read through the configured reader — the unlabeled and excluded files of
// self-training and the auxiliary MLM's text.
#pragma once

#include <ethost/app.h>
#include <ethost/context.h>
#include <ethost/log.h>
#include <ethost/reader.h>

#include <string>
#include <vector>

namespace et::apps::fewshot {

// Rows read through a reader, with its columns.
struct RowTable {
  std::vector<data::Column> columns;
  std::vector<Row> rows;
};

// Rows of files through the configured reader (data.*); input_schema (when not empty) replaces
// data.input_schema. Bad rows are counted and logged as a warning naming `what`; a file that cannot be opened
// is an et::DataError whose hint names `key`, the config key that listed it.
RowTable read_table(Context& ctx, const ConfigView& root, const std::string& reader,
                    const std::vector<std::string>& files, const std::string& input_schema,
                    const log::Logger& log, const std::string& what, const std::string& key);

// data.input_schema without the label column: the schema of unlabeled files by default.
std::string schema_without_label(const ConfigView& root, const std::string& label_name);

}  // namespace et::apps::fewshot
