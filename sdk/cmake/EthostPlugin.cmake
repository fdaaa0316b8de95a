# EthostPlugin.cmake: ethost_add_plugin() — builds one plugin MODULE with its manifest and entry descriptor.
#
#   ethost_add_plugin(KIND model NAME bert MANIFEST plugin.toml SOURCES a.cpp b.cpp [LIBRARIES ...])
#
# Produces the target and file <kind>_<name> (model_bert, plugins/model_bert.so), so an app and a model of the
# same name (app_fashionbert.so, model_fashionbert.so) never collide. KIND/NAME name the plugin's main component,
# which its manifest must provide; a plugin may provide more components. The file has hidden visibility,
# -Wl,-z,defs, the manifest embedded in the ELF section .ethost.manifest (plus a generated [build] table: sdk_abi,
# torch, cxx11_abi, compiler, and toolkit when LIBRARIES holds ethost::toolkit), and the generated entry symbol ethost_plugin_v<ABI major>. Installs to
# <prefix>/lib/ethost/plugins. The host identifies components by their manifest, never by file name: the older
# form ethost_add_plugin(<target> MANIFEST ...) still builds <target>.so, which loads the same way.
#
# Test-only options (for deliberately broken fixtures): TEST_ABI "<major>.<minor>", TEST_TORCH "<major>.<minor>",
# TEST_TOOLKIT "<major>.<minor>",
# TEST_NO_ENTRY, TEST_ALLOW_UNDEFINED, NO_INSTALL, OUTPUT_DIRECTORY <dir>.
set(_ETHOST_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(ethost_add_plugin)
  cmake_parse_arguments(EP "TEST_NO_ENTRY;TEST_ALLOW_UNDEFINED;NO_INSTALL"
                           "KIND;NAME;MANIFEST;TEST_ABI;TEST_TORCH;TEST_TOOLKIT;OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(EP_KIND OR EP_NAME)
    if(NOT EP_KIND OR NOT EP_NAME OR EP_UNPARSED_ARGUMENTS)
      message(FATAL_ERROR "ethost_add_plugin: use ethost_add_plugin(KIND <app|model|optimizer|reader> NAME <name> "
                          "MANIFEST plugin.toml SOURCES ...)")
    endif()
    if(NOT EP_KIND MATCHES "^(app|model|optimizer|reader)$")
      message(FATAL_ERROR "ethost_add_plugin(KIND ${EP_KIND}): the kind must be app, model, optimizer or reader")
    endif()
    set(name ${EP_KIND}_${EP_NAME})
  else()
    list(LENGTH EP_UNPARSED_ARGUMENTS _n)
    if(NOT _n EQUAL 1)
      message(FATAL_ERROR "ethost_add_plugin: use ethost_add_plugin(KIND <kind> NAME <name> MANIFEST ... SOURCES ...)")
    endif()
    set(name ${EP_UNPARSED_ARGUMENTS})
  endif()
  if(NOT EP_MANIFEST)
    message(FATAL_ERROR "ethost_add_plugin(${name}): MANIFEST plugin.toml is required")
  endif()
  get_filename_component(_manifest ${EP_MANIFEST} ABSOLUTE)
  file(READ ${_manifest} _text)
  if(EP_KIND)
    # The file is named after a component the manifest provides (kind and name of one [[provides]] entry).
    string(REGEX MATCH "kind *= *\"${EP_KIND}\"[^[]*name *= *\"${EP_NAME}\"" _k1 "${_text}")
    string(REGEX MATCH "name *= *\"${EP_NAME}\"[^[]*kind *= *\"${EP_KIND}\"" _k2 "${_text}")
    if(NOT _k1 AND NOT _k2)
      message(FATAL_ERROR "${_manifest}: no [[provides]] entry with kind = \"${EP_KIND}\" and name = \"${EP_NAME}\" "
                          "(ethost_add_plugin(KIND ${EP_KIND} NAME ${EP_NAME}) names the plugin after it)")
    endif()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_manifest})
  string(REGEX MATCH "\n?id *= *\"([^\"]*)\"" _m "${_text}")
  set(_EP_ID ${CMAKE_MATCH_1})
  string(REGEX MATCH "\n?version *= *\"([^\"]*)\"" _m "${_text}")
  set(_EP_VERSION ${CMAKE_MATCH_1})
  if(NOT _EP_ID OR NOT _EP_VERSION)
    message(FATAL_ERROR "${_manifest}: [plugin] needs id = \"...\" and version = \"...\"")
  endif()

  set(_EP_ABI_MAJOR ${ETHOST_SDK_ABI_MAJOR})
  set(_EP_ABI_MINOR ${ETHOST_SDK_ABI_MINOR})
  if(EP_TEST_ABI)
    string(REPLACE "." ";" _l ${EP_TEST_ABI})
    list(GET _l 0 _EP_ABI_MAJOR)
    list(GET _l 1 _EP_ABI_MINOR)
  endif()
  set(_EP_TORCH_MAJOR ${ETHOST_TORCH_MAJOR})
  set(_EP_TORCH_MINOR ${ETHOST_TORCH_MINOR})
  if(EP_TEST_TORCH)
    string(REPLACE "." ";" _l ${EP_TEST_TORCH})
    list(GET _l 0 _EP_TORCH_MAJOR)
    list(GET _l 1 _EP_TORCH_MINOR)
  endif()
  set(_EP_ENTRY ethost_plugin_v${_EP_ABI_MAJOR})
  set(_EP_HAS_ENTRY 1)
  if(EP_TEST_NO_ENTRY)
    set(_EP_HAS_ENTRY 0)
  endif()
  # A plugin that links the toolkit records its version: the host refuses it with another toolkit major.
  set(_EP_TOOLKIT "")
  if(EP_TEST_TOOLKIT)
    set(_EP_TOOLKIT "toolkit = \"${EP_TEST_TOOLKIT}\"\n")
  elseif("ethost::toolkit" IN_LIST EP_LIBRARIES OR "ethost_toolkit" IN_LIST EP_LIBRARIES)
    set(_EP_TOOLKIT "toolkit = \"${ETHOST_TOOLKIT_MAJOR}.${ETHOST_TOOLKIT_MINOR}\"\n")
  endif()
  set(_EP_NAME ${name})
  set(_EP_MANIFEST "${_text}
[build]
sdk_abi = \"${_EP_ABI_MAJOR}.${_EP_ABI_MINOR}\"
torch = \"${_EP_TORCH_MAJOR}.${_EP_TORCH_MINOR}\"
cxx11_abi = 1
compiler = \"${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}\"
${_EP_TOOLKIT}")
  set(_gen ${CMAKE_CURRENT_BINARY_DIR}/${name}_descriptor.cpp)
  configure_file(${_ETHOST_PLUGIN_CMAKE_DIR}/plugin_descriptor.cpp.in ${_gen} @ONLY)

  add_library(${name} MODULE ${EP_SOURCES} ${_gen})
  target_link_libraries(${name} PRIVATE ethost::sdk ${EP_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    INSTALL_RPATH "$ORIGIN/../..")
  if(NOT EP_TEST_ALLOW_UNDEFINED)
    target_link_options(${name} PRIVATE -Wl,-z,defs)
  endif()
  # Only the entry symbol is exported (template instantiations over LibTorch types would otherwise leak out).
  set(_vs ${CMAKE_CURRENT_BINARY_DIR}/${name}_exports.map)
  file(WRITE ${_vs} "{\n  global: ethost_plugin_v*;\n  local: *;\n};\n")
  target_link_options(${name} PRIVATE -Wl,--exclude-libs,ALL -Wl,--version-script=${_vs})
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${_vs})
  if(EP_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${EP_OUTPUT_DIRECTORY})
  elseif(DEFINED ETHOST_OUTPUT_PLUGINS)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ETHOST_OUTPUT_PLUGINS})
    if(EP_KIND AND EXISTS ${ETHOST_OUTPUT_PLUGINS}/${EP_NAME}.so)
      file(REMOVE ${ETHOST_OUTPUT_PLUGINS}/${EP_NAME}.so)  # left by a build from before kind-qualified names
    endif()
  endif()
  if(COMMAND ethost_torch_pch)
    ethost_torch_pch(${name})
  endif()
  if(COMMAND ethost_warnings)
    ethost_warnings(${name})
  endif()
  set_property(GLOBAL APPEND PROPERTY ETHOST_PLUGIN_TARGETS ${name})
  if(NOT EP_NO_INSTALL)
    include(GNUInstallDirs)
    install(TARGETS ${name} LIBRARY DESTINATION lib/ethost/plugins)
  endif()
endfunction()
