// main.cpp: the ethost executable — runs the command line and maps errors to exit codes.
#include <iostream>

#include "cli/commands.h"
#include "cpu/blas_backend.h"
#include "ethost/error.h"
#include "plugin/component_errors.h"

int main(int argc, char** argv) {
  // Before anything uses BLAS: restart on the right OpenBLAS core if OpenBLAS misdetected this CPU.
  et::host::cpu::ensure_blas_core(argv);
  try {
    return et::host::run_host(argc, argv);
  } catch (const et::Error& e) {
    std::cerr << "ethost: error: " << e.what() << std::endl;
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "ethost: internal error: " << et::host::exception_text(e) << std::endl;
    return et::kExitInternal;
  }
}
