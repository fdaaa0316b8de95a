// python_worker.h: the Python baseline as a long-lived child process (bert_eager.py --serve) that runs one
// iteration per request, so ethost-bench can alternate Python iterations with its own.
#pragma once

#include <sys/types.h>

#include <string>

namespace et::bench {

class PythonWorker {
 public:
  // Starts `python script --serve job_path` and waits for its "ready"; throws et::InternalError on failure.
  PythonWorker(const std::string& python, const std::string& script, const std::string& job_path);
  ~PythonWorker();
  PythonWorker(const PythonWorker&) = delete;
  PythonWorker& operator=(const PythonWorker&) = delete;

  // Builds the model (and optimizer) for one kind of measurement: precision "fp32"/"bf16", kind
  // "train"/"infer"/"latency".
  void setup(const std::string& precision, const std::string& kind);
  // One iteration; returns the seconds Python measured for it.
  double step();

 private:
  std::string request(const std::string& line);
  void shutdown();  // "quit", close the pipes, reap the child
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

}  // namespace et::bench
