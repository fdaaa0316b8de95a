// tc_options.cpp: reads and checks app/text_classify's keys.
#include "tc_options.h"

#include <ethost/error.h>

namespace et::apps::text_classify {

Options Options::from_config(const ConfigView& c) {
  Options o;
  bool multi = c.get_bool("multi_label"), reg = c.get_bool("regression");
  if (multi && reg)
    throw ConfigError("multi_label and regression cannot both be true", c.where("regression"));
  o.problem = multi ? Problem::multi_label : reg ? Problem::regression : Problem::single_label;
  o.tables = c.get_string_list("data.tables");
  if (o.tables.empty()) throw ConfigError("data.tables is empty", c.where("data.tables"), "give at least one input file");
  o.first_sequence = c.get_string("data.first_sequence");
  o.second_sequence = c.get_string("data.second_sequence");
  o.label_name = c.get_string("data.label_name");
  o.label_values = c.get_string_list("data.label_enumerate_values");
  o.sequence_length = c.get_int("data.sequence_length");
  o.vocab_file = c.get_string("data.vocab_file");
  o.do_lower_case = c.get_bool("data.do_lower_case");
  o.pretrained = c.get_string("pretrain_model_name_or_path");
  o.checkpoint_dir = c.get_string("train.checkpoint_dir");
  o.threshold = c.get_double("threshold");
  o.eval_batch_size = c.get_int("eval.batch_size");
  o.eval_results_file = c.get_string("eval.results_file");
  o.predict_outputs = c.get_string("predict.outputs");
  o.output_schema = c.get_string_list("predict.output_schema");
  o.append_cols = c.get_string_list("predict.append_cols");
  o.predict_batch_size = c.get_int("predict.batch_size");
  o.predict_header = c.get_bool("predict.header");
  o.predict_chunk_rows = c.get_int("predict.chunk_rows");
  for (auto& col : o.output_schema)
    if (col != "predictions" && col != "probabilities" && col != "logits")
      throw ConfigError("predict.output_schema column '" + col + "' is unknown", c.where("predict.output_schema"),
                        "use predictions, probabilities, logits");
  return o;
}

const char* Options::problem_name() const {
  switch (problem) {
    case Problem::single_label: return "single_label_classification";
    case Problem::multi_label: return "multi_label_classification";
    case Problem::regression: return "regression";
  }
  return "";
}

}  // namespace et::apps::text_classify
