# TorchPch: one precompiled header with LibTorch, reused by every torch-heavy target with the same flags.
# ethost_torch_pch(target): make target reuse the shared PCH (no-op when ETHOST_USE_PCH is off).
if(ETHOST_USE_PCH)
  add_library(ethost_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
  target_link_libraries(ethost_pch PUBLIC torch)
  target_precompile_headers(ethost_pch PRIVATE <torch/torch.h> <string> <vector> <map> <memory>)
endif()
function(ethost_torch_pch target)
  if(ETHOST_USE_PCH)
    target_precompile_headers(${target} REUSE_FROM ethost_pch)
  endif()
endfunction()
