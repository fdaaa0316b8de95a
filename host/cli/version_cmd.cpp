// version_cmd.cpp: `ethost --version`.
#include <torch/version.h>

#include <iostream>

#include "cli_internal.h"
#include "ethost/error.h"
#include "ethost/toolkit_version.h"
#include "ethost/version.h"

#ifndef ETHOST_BUILD_TYPE
#define ETHOST_BUILD_TYPE "unknown"
#endif

namespace et::host {

int cmd_version() {
  std::cout << "ethost " << ET_VERSION_STRING << "\n"
            << "SDK ABI " << ET_SDK_ABI_MAJOR << "." << ET_SDK_ABI_MINOR << " (plugin contract), toolkit "
            << ET_TOOLKIT_MAJOR << "." << ET_TOOLKIT_MINOR << "\n"
            << "LibTorch " << TORCH_VERSION << " (_GLIBCXX_USE_CXX11_ABI=" << _GLIBCXX_USE_CXX11_ABI << ")\n"
            << "build " << ETHOST_BUILD_TYPE << ", g++ " << __VERSION__ << "\n";
  return kExitOk;
}

}  // namespace et::host
