// tc_options.h: app/text_classify's configuration, read once from the resolved config.
#pragma once

#include <ethost/config.h>

#include <string>
#include <vector>

namespace et::apps::text_classify {

enum class Problem { single_label, multi_label, regression };

struct Options {
  Problem problem = Problem::single_label;
  std::vector<std::string> tables;
  std::string first_sequence, second_sequence, label_name;
  std::vector<std::string> label_values;  // as configured (maybe one file path)
  int64_t sequence_length = 128;
  std::string vocab_file;
  bool do_lower_case = true;
  std::string pretrained;       // pretrain_model_name_or_path
  std::string checkpoint_dir;   // train.checkpoint_dir
  double threshold = 0.5;
  int64_t eval_batch_size = 64;
  std::string eval_results_file;
  std::string predict_outputs;
  std::vector<std::string> output_schema, append_cols;
  int64_t predict_batch_size = 64;
  bool predict_header = false;
  int64_t predict_chunk_rows = 8192;

  static Options from_config(const ConfigView& root);
  const char* problem_name() const;
};

}  // namespace et::apps::text_classify
