# find_package(PDK CONFIG): the PDK kit as the tensorflow-pdk wheel installs it
# (site-packages/tensorflow_pdk/{include,cmake}; tensorflow_pdk.get_cmake_dir()).
#
#   find_package(PDK CONFIG REQUIRED)      # -DPDK_DIR=$(python -c "import tensorflow_pdk as p; print(p.get_cmake_dir())")
#   pdk_add_plugin(NAME hello_plugin SOURCES device.cc kernels.cc)
#
# Gives:
#   PDK_INCLUDE_DIR          the kit's headers (pdk/kernel.h, pdk/tf/op_kernel.h, ...)
#   PDK_TF_PATHS_INCLUDE_DIR the kit's headers at TensorFlow's include paths
#                            (tensorflow/core/framework/op_kernel.h, ...), searched
#                            before TensorFlow's own, so a TensorFlow kernel's
#                            include lines stay as written (docs/kit.md)
#   PDK_TF_INCLUDE_DIR, PDK_TF_LIB_DIR, PDK_TF_VERSION
#                            the installed TensorFlow's headers (C API, Eigen) and
#                            library directory, from tf.sysconfig
#   PDK::kit                 an interface target: the kit's include directories,
#                            then TensorFlow's, TensorFlow's compile flags
#                            (tf.sysconfig.get_compile_flags()), C++17, and
#                            libtensorflow_framework (tf.sysconfig.get_link_flags(),
#                            whose -L comes first)
#   pdk_add_plugin(NAME <target> SOURCES <files...> [EXPORTS <C symbols...>])
#                            a shared library lib<target>.so linked with PDK::kit
#                            whose dynamic symbols are TensorFlow's C entry points
#                            (SE_InitPlugin, TF_InitKernel, TF_InitGraph,
#                            TF_InitProfiler), the kit's TFKit_OpNames (the ops
#                            of REGISTER_OP, for tensorflow_pdk.load_op_library;
#                            pdk/op_names.h) and EXPORTS only (a version script);
#                            WITH_TF_FRAMEWORK links the kit's definitions of the
#                            functions TensorFlow's kernel headers declare and
#                            TensorFlow keeps in its .cc files (BinaryOpShared,
#                            ConcatCPU, the fill functors, BCast::FromShape;
#                            pdk/tf/framework_src/README.md); no
#                            undefined symbols, an rpath to TensorFlow's library
#                            directory (and to site-packages/tensorflow, for a copy
#                            installed in site-packages/tensorflow-plugins)
#
# TensorFlow is found through Python3_EXECUTABLE (find_package(Python3) if unset):
# the interpreter whose site-packages hold tensorflow. No TensorFlow source tree.
#
# Build type: a project that sets no CMAKE_BUILD_TYPE (single-config generators:
# Makefiles, Ninja) builds Release (-O3 -DNDEBUG), not CMake's flagless default,
# which compiles Eigen kernels unoptimized; -DCMAKE_BUILD_TYPE=Debug (or any
# other) is kept.
get_filename_component(_pdk_package_dir "${CMAKE_CURRENT_LIST_DIR}" DIRECTORY)
set(PDK_INCLUDE_DIR "${_pdk_package_dir}/include")
set(PDK_TF_PATHS_INCLUDE_DIR "${PDK_INCLUDE_DIR}/pdk/tfcompat")
if(NOT EXISTS "${PDK_INCLUDE_DIR}/pdk/tf/op_kernel.h")
  set(PDK_FOUND FALSE)
  set(PDK_NOT_FOUND_MESSAGE "the kit's headers are missing under ${PDK_INCLUDE_DIR}")
  return()
endif()

get_property(_pdk_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
if(NOT CMAKE_BUILD_TYPE AND NOT _pdk_multi_config)
  message(STATUS "PDK: no CMAKE_BUILD_TYPE given, building Release")
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type (PDKConfig.cmake's default: Release)" FORCE)
  set(CMAKE_BUILD_TYPE Release)
endif()

if(NOT Python3_EXECUTABLE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c [=[
import tensorflow as tf
s = tf.sysconfig
print("include=" + s.get_include())
print("lib=" + s.get_lib())
print("version=" + tf.__version__)
for f in s.get_compile_flags():
    print("cflag=" + f)
for f in s.get_link_flags():
    print("lflag=" + f)
]=]
  OUTPUT_VARIABLE _pdk_tf RESULT_VARIABLE _pdk_tf_rc ERROR_VARIABLE _pdk_tf_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pdk_tf_rc EQUAL 0)
  set(PDK_FOUND FALSE)
  set(PDK_NOT_FOUND_MESSAGE "${Python3_EXECUTABLE} cannot import tensorflow: ${_pdk_tf_err}")
  return()
endif()
string(REPLACE "\n" ";" _pdk_tf_lines "${_pdk_tf}")
set(_pdk_defs "")
set(_pdk_libs "")
foreach(line IN LISTS _pdk_tf_lines)
  if(line MATCHES "^include=(.*)")
    set(PDK_TF_INCLUDE_DIR "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^lib=(.*)")
    set(PDK_TF_LIB_DIR "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^version=(.*)")
    set(PDK_TF_VERSION "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^cflag=-D(.*)")  # -I is PDK_TF_INCLUDE_DIR, -std is cxx_std_17
    list(APPEND _pdk_defs "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^lflag=-l:(.*)")  # -l:libtensorflow_framework.so.2, in -L's directory
    list(APPEND _pdk_libs "${PDK_TF_LIB_DIR}/${CMAKE_MATCH_1}")
  elseif(line MATCHES "^lflag=-l(.*)")
    list(APPEND _pdk_libs "${CMAKE_MATCH_1}")
  endif()
endforeach()

if(NOT TARGET PDK::kit)
  add_library(PDK::kit INTERFACE IMPORTED)
  target_include_directories(PDK::kit INTERFACE "${PDK_INCLUDE_DIR}" "${PDK_TF_PATHS_INCLUDE_DIR}")
  target_include_directories(PDK::kit SYSTEM INTERFACE "${PDK_TF_INCLUDE_DIR}")
  target_compile_definitions(PDK::kit INTERFACE ${_pdk_defs})
  target_compile_features(PDK::kit INTERFACE cxx_std_17)
  target_link_libraries(PDK::kit INTERFACE ${_pdk_libs})
endif()

function(pdk_add_plugin)
  cmake_parse_arguments(ARG "WITH_TF_FRAMEWORK" "NAME" "SOURCES;EXPORTS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "pdk_add_plugin(NAME <target> SOURCES <files...> [EXPORTS <C symbols...>] "
                        "[WITH_TF_FRAMEWORK])")
  endif()
  add_library(${ARG_NAME} SHARED ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE PDK::kit)
  if(ARG_WITH_TF_FRAMEWORK)
    # The kit's definitions of what TensorFlow's kernel headers declare and
    # TensorFlow defines in its own .cc files (pdk/tf/framework_src/README.md),
    # one static library per project: the linker takes what the plugin calls.
    if(NOT TARGET pdk_tf_framework)
      file(GLOB _pdk_fw_sources "${PDK_INCLUDE_DIR}/pdk/tf/framework_src/*.cc")
      add_library(pdk_tf_framework STATIC ${_pdk_fw_sources})
      target_link_libraries(pdk_tf_framework PRIVATE PDK::kit)
      set_target_properties(pdk_tf_framework PROPERTIES CXX_VISIBILITY_PRESET hidden
                            VISIBILITY_INLINES_HIDDEN ON POSITION_INDEPENDENT_CODE ON)
    endif()
    target_link_libraries(${ARG_NAME} PRIVATE pdk_tf_framework)
  endif()
  set_target_properties(${ARG_NAME} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    BUILD_RPATH "${PDK_TF_LIB_DIR}"
    INSTALL_RPATH "$ORIGIN/../tensorflow;${PDK_TF_LIB_DIR}")
  # The dynamic symbol table holds TensorFlow's C entry points, the kit's
  # TFKit_OpNames and EXPORTS, nothing else: no C++ symbol of the kit, the
  # plugin or the C++ library (template instances and GNU "unique" symbols
  # included), so two plugins built with the kit never bind to each other's
  # copies.
  set(_map "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.exports.map")
  list(JOIN ARG_EXPORTS "; " _extra)
  if(_extra)
    set(_extra " ${_extra};")
  endif()
  file(CONFIGURE OUTPUT "${_map}" CONTENT
       "{\n  global: SE_InitPlugin; TF_InitKernel; TF_InitGraph; TF_InitProfiler; TFKit_OpNames;${_extra}\n  local: *;\n};\n")
  target_link_options(${ARG_NAME} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL
                      "-Wl,--version-script=${_map}")
  set_property(TARGET ${ARG_NAME} APPEND PROPERTY LINK_DEPENDS "${_map}")
endfunction()

set(PDK_FOUND TRUE)
