# Dependencies: every third-party library, found from Debian's packages.
find_package(Torch REQUIRED)
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(tomlplusplus REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(TBB REQUIRED)
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h REQUIRED)
find_library(UTF8PROC_LIBRARY utf8proc REQUIRED)
find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h)

# Torch version (Debian's TorchConfigVersion accepts anything newer, so check major.minor here).
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _tv "${Torch_VERSION}")
set(ETHOST_TORCH_MAJOR ${CMAKE_MATCH_1})
set(ETHOST_TORCH_MINOR ${CMAKE_MATCH_2})
message(STATUS "ethost: LibTorch ${Torch_VERSION} (ABI ${ETHOST_TORCH_MAJOR}.${ETHOST_TORCH_MINOR})")
