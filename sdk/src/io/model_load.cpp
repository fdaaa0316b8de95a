// model_load.cpp: et::Model::load — the default exact reload of a saved model directory.
#include <torch/torch.h>

#include "ethost/error.h"
#include "ethost/io/load_weights.h"
#include "ethost/io/state_dict.h"
#include "ethost/model.h"

namespace et {

void Model::load(const std::string& dir) {
  std::string used;
  io::StateDict weights = io::load_checkpoint_weights(dir, &used);
  io::LoadReport r = io::load_weights(module(), weights, [](const std::string& k) { return k; });
  if (!r.missing.empty() || !r.mismatched.empty())
    throw DataError("cannot restore the model: " +
                        (r.missing.empty() ? ""
                                           : "missing " + r.missing.front() + " (" +
                                                 std::to_string(r.missing.size()) + " in all)") +
                        (r.mismatched.empty() ? "" : " mismatched " + r.mismatched.front()),
                    used, "the checkpoint was written by another model configuration");
}

}  // namespace et
