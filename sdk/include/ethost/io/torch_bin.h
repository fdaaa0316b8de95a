// torch_bin.h: reads PyTorch torch.save() state dicts (the >=1.6 zip format) with our own minimal unpickler.
#pragma once

#include <string>

#include "ethost/export.h"
#include "ethost/io/state_dict.h"

namespace et::io {

// Reads a state dict saved by torch.save(state_dict, path) in the zip format (PyTorch >= 1.6): the pickle
// "<archive>/data.pkl" plus one "<archive>/data/<key>" record per storage. The top level must be a dict or a
// collections.OrderedDict of tensors (nn.Parameter included); keys keep their saved order. Tensors are
// contiguous, own their memory, and keep the saved dtype. Throws et::DataError "<path>: <reason>" for the legacy
// (pre-1.6) format (with a conversion hint), TorchScript archives, unsupported pickle opcodes or globals,
// non-tensor entries, and storages too small for their tensors.
ET_API StateDict read_torch_bin(const std::string& path);

// True when the file starts like a torch.save() output: a zip ("PK\3\4") or the legacy pickle magic number.
ET_API bool looks_like_torch_bin(const std::string& path);

}  // namespace et::io
