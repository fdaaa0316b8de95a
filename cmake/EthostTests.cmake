# EthostTests.cmake: ethost_plugin_tests() — a plugin registers the tests in its own folder into ethost_tests.
#
#   ethost_plugin_tests(SOURCES tests/a_test.cpp tests/b_test.cpp [LIBRARIES ...] [INCLUDE_DIRS ...])
#
# Called at the end of a plugin's CMakeLists.txt (after ethost_add_plugin). The sources are compiled into the one
# doctest binary, ethost_tests (tests/CMakeLists.txt reads the global property ETHOST_PLUGIN_TEST_SOURCES);
# LIBRARIES and INCLUDE_DIRS are what those sources need beyond the test binary's own (e.g. an image library).
# ctest labels each suite with its name prefix (unit, plugin, shared, integration, ...) and with the owning
# plugin as <kind>_<name> (model_bert, app_fashionbert), so `ctest -L model_bert` runs one plugin's tests.
# A no-op when ETHOST_BUILD_TESTS is off.
function(ethost_plugin_tests)
  cmake_parse_arguments(EPT "" "" "SOURCES;LIBRARIES;INCLUDE_DIRS" ${ARGN})
  if(NOT EPT_SOURCES OR EPT_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ethost_plugin_tests: use ethost_plugin_tests(SOURCES tests/x_test.cpp ... "
                        "[LIBRARIES ...] [INCLUDE_DIRS ...]) in the plugin's CMakeLists.txt")
  endif()
  if(NOT ETHOST_BUILD_TESTS)
    return()
  endif()
  # The owner label mirrors the plugin file name: plugins/models/bert -> model_bert.
  get_filename_component(_name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  get_filename_component(_kind_dir ${CMAKE_CURRENT_SOURCE_DIR} DIRECTORY)
  get_filename_component(_kind ${_kind_dir} NAME)
  string(REGEX REPLACE "s$" "" _kind ${_kind})
  set(_owner ${_kind}_${_name})
  foreach(_src IN LISTS EPT_SOURCES)
    get_filename_component(_abs ${_src} ABSOLUTE)
    if(NOT EXISTS ${_abs})
      message(FATAL_ERROR "ethost_plugin_tests(${_owner}): no test source ${_abs}")
    endif()
    set_property(GLOBAL APPEND PROPERTY ETHOST_PLUGIN_TEST_SOURCES ${_abs})
    # Each suite the file opens gets the owner label (read once here; ctest discovers the suites at test time).
    file(STRINGS ${_abs} _suites REGEX "TEST_SUITE\\(\"[A-Za-z0-9_.]+\"\\)")
    foreach(_s IN LISTS _suites)
      string(REGEX MATCH "TEST_SUITE\\(\"([A-Za-z0-9_.]+)\"\\)" _m "${_s}")
      set_property(GLOBAL APPEND PROPERTY ETHOST_TEST_SUITE_OWNERS "${CMAKE_MATCH_1}=${_owner}")
    endforeach()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY ETHOST_PLUGIN_TEST_LIBRARIES ${EPT_LIBRARIES})
  set_property(GLOBAL APPEND PROPERTY ETHOST_PLUGIN_TEST_INCLUDE_DIRS ${EPT_INCLUDE_DIRS})
endfunction()
