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
    # The PCH is built with -fPIC; executables would get -fPIE and silently ignore it.
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
  endif()
endfunction()
