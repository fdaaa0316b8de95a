// tc_predict.cpp: chunked predict — read, encode (parallel), batch, forward, and write rows in input order.
#include "tc_predict.h"

#include <ethost/data/dataset.h>
#include <ethost/error.h>
#include <ethost/log.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace et::apps::text_classify {
namespace {

std::string join_floats(const float* p, int64_t n) {
  std::ostringstream os;
  os << std::setprecision(7);
  for (int64_t i = 0; i < n; ++i) os << (i ? "," : "") << p[i];
  return os.str();
}

// Output cells must not break the TSV: tabs and newlines inside copied columns become spaces.
std::string tsv_safe(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

PredictSummary run_predict(Task& task, Model& model, Reader& reader, const std::string& output_path) {
  const Options& o = task.options();
  std::vector<size_t> append_idx;
  auto cols = reader.columns();
  for (auto& c : o.append_cols) append_idx.push_back(data::column_index(cols, c, "predict.append_cols"));
  auto parent = std::filesystem::path(output_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::string tmp = output_path + ".tmp";
  std::ofstream out(tmp, std::ios::binary);
  if (!out) throw DataError("cannot write the predictions", output_path);
  if (o.predict_header) {
    std::string h;
    for (auto& c : o.output_schema) h += (h.empty() ? "" : "\t") + c;
    for (auto& c : o.append_cols) h += (h.empty() ? "" : "\t") + c;
    out << h << "\n";
  }
  PredictSummary s;
  s.output = output_path;
  torch::NoGradGuard no_grad;
  model.module().eval();
  auto encode = [&](const Row& r, std::string& why) { return task.encode(r, why, false); };
  data::stream_dataset(reader, encode, o.predict_chunk_rows, [&](std::vector<data::Example>&& chunk, std::vector<Row>&& rows) {
    data::Dataset ds;
    ds.examples = std::move(chunk);
    data::PlanOptions po;
    po.batch_size = o.predict_batch_size;
    po.shuffle = false;
    for (auto& idx : data::plan_epoch(ds, po, 0)) {
      auto b = data::collate(ds, idx, task.pad_id());
      auto logits = model.forward(task.model_inputs(b)).at("logits").to(torch::kFloat).contiguous();
      const int64_t L = logits.size(1);
      at::Tensor probs = o.problem == Problem::single_label ? torch::softmax(logits, 1)
                         : o.problem == Problem::multi_label ? torch::sigmoid(logits)
                                                             : logits;
      probs = probs.contiguous();
      for (size_t r = 0; r < idx.size(); ++r) {
        const float* lg = logits.data_ptr<float>() + int64_t(r) * L;
        const float* pr = probs.data_ptr<float>() + int64_t(r) * L;
        std::string line;
        for (auto& col : o.output_schema) {
          std::string cell;
          if (col == "predictions") {
            if (o.problem == Problem::single_label) {
              cell = task.labels().names[size_t(std::max_element(pr, pr + L) - pr)];
            } else if (o.problem == Problem::multi_label) {
              for (int64_t k = 0; k < L; ++k)
                if (pr[k] >= o.threshold) cell += (cell.empty() ? "" : ",") + task.labels().names[size_t(k)];
            } else {
              cell = join_floats(lg, 1);
            }
          } else if (col == "probabilities") {
            cell = join_floats(pr, L);
          } else {
            cell = join_floats(lg, L);
          }
          line += (line.empty() ? "" : "\t") + cell;
        }
        for (size_t k : append_idx) line += (line.empty() ? "" : "\t") + tsv_safe(rows[size_t(idx[r])].values[k]);
        out << line << "\n";
        ++s.rows_written;
      }
    }
  });
  out.close();
  if (!out) throw DataError("writing the predictions failed", output_path);
  std::filesystem::rename(tmp, output_path);
  s.bad_rows = reader.bad_rows().count();
  return s;
}

}  // namespace et::apps::text_classify
