// row_table.cpp: rows of files read through the configured reader (row_table.h).
#include "row_table.h"

#include <ethost/data/schema.h>
#include <ethost/io/open_tables.h>

namespace et::apps::fewshot {

RowTable read_table(Context& ctx, const ConfigView& root, const std::string& reader,
                    const std::vector<std::string>& files, const std::string& input_schema,
                    const log::Logger& log, const std::string& what, const std::string& key) {
  Config dc = Config::from_view(root.sub("data"));
  if (!input_schema.empty()) dc.set_string("input_schema", input_schema, what + " (input_schema)");
  auto r = ctx.create<Reader>(reader, dc.view());
  io::open_tables(*r, files, root, key);
  RowTable t;
  t.columns = r->columns();
  Row row;
  while (r->next(row)) t.rows.push_back(row);
  std::string bad = r->bad_rows().summary();
  if (!bad.empty()) log.warn(what, ": ", bad);
  return t;
}

std::string schema_without_label(const ConfigView& root, const std::string& label_name) {
  std::string schema;
  for (const auto& c : data::parse_input_schema(root.get_string("data.input_schema"), "data.input_schema"))
    if (c.name != label_name)
      schema += (schema.empty() ? "" : ",") + c.name + ":" + c.type + ":" + std::to_string(c.length);
  return schema;
}

}  // namespace et::apps::fewshot
