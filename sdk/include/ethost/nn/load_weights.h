// load_weights.h: the nn toolkit's names for et::io::load_weights and friends (they live in the contract,
// because Model::load's default uses them).
#pragma once

#include "ethost/io/load_weights.h"

namespace et::nn {

using io::load_weights;
using io::LoadReport;
using io::module_tensors;
using io::shape_string;

}  // namespace et::nn
