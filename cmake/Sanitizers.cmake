# Sanitizers: ASan + UBSan for every target when ETHOST_SANITIZE is on.
if(ETHOST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # LibTorch's vptr checks across uninstrumented libraries give false UBSan reports.
  add_compile_options(-fno-sanitize=vptr)
  # Line tables only (-g1): reports keep function, file and line, and a TU compiles 10-25 % faster than with -g
  # (measured: trainer.cpp 37.8 -> 29.1 s, transformer_config.cpp 16.2 -> 14.1 s). -O1 would make the suites
  # faster but most TUs slower to compile (loader.cpp 9.6 -> 19.6 s), and the build is most of the ASan job.
  # Asserts stay on (no NDEBUG).
  set(CMAKE_C_FLAGS_DEBUG "-O0 -g1")
  set(CMAKE_CXX_FLAGS_DEBUG "-O0 -g1")
endif()
