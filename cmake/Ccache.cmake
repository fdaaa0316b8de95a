# Ccache: use ccache for C/C++ (and nvcc) when available, with the sloppiness precompiled headers need.
find_program(ETHOST_CCACHE ccache)
if(ETHOST_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(_launcher ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${ETHOST_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${_launcher})  # kernels/cuda (nvcc), when built
  message(STATUS "ethost: using ccache (${ETHOST_CCACHE})")
endif()
