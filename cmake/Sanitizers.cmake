# Sanitizers: ASan + UBSan for every target when ETHOST_SANITIZE is on.
if(ETHOST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # LibTorch's vptr checks across uninstrumented libraries give false UBSan reports.
  add_compile_options(-fno-sanitize=vptr)
endif()
