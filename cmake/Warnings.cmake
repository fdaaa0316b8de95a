# Warnings: the warning set applied to ethost's own targets.
function(ethost_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wnon-virtual-dtor -Wno-unused-parameter)
endfunction()
