# Compiler settings every healthhook target shares: warnings and optional sanitizers
# (healthhook_flags), and Asio + Beast compiled once (healthhook_options adds the library
# that holds them: common/boost_asio_beast.cpp). Targets link healthhook_options.
add_library(healthhook_flags INTERFACE)
add_library(healthhook_options INTERFACE)
target_link_libraries(healthhook_options INTERFACE healthhook_flags)
target_compile_options(healthhook_flags INTERFACE -Wall -Wextra -Wpedantic)
# Set on the targets, not as global flags. Not BOOST_BEAST_USE_STD_STRING_VIEW: in Boost
# 1.81 it only prints a deprecation message in every source that includes Beast;
# beast::string_view is boost::core::string_view either way, which converts to and from
# std::string_view.
target_compile_definitions(healthhook_flags INTERFACE BOOST_ASIO_NO_DEPRECATED)
# Asio's and Beast's non-template code is compiled in one source instead of in each of the
# ~60 that include them: a third of such a source's compile time (CI builds the tree three
# times). Every target must see these two, or it would expect the code inline.
target_compile_definitions(healthhook_flags INTERFACE BOOST_ASIO_SEPARATE_COMPILATION
                           BOOST_BEAST_SEPARATE_COMPILATION)
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # A unity build (scripts/test) compiles each source as a file included into a batch; GCC
  # then warns that a coroutine frame or lambda there holds a type of internal linkage
  # (-Wsubobject-linkage), which is only a risk for real headers shared by several units.
  target_compile_options(healthhook_flags INTERFACE -Wno-subobject-linkage)
endif()
if(HEALTHHOOK_WERROR)
  target_compile_options(healthhook_flags INTERFACE -Werror)
endif()
if(HEALTHHOOK_ASAN)
  target_compile_options(healthhook_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(healthhook_flags INTERFACE -fsanitize=address,undefined)
endif()
# libFuzzer's coverage instrumentation, for what the fuzz targets explore: the libraries
# they feed outside bytes into (tests/fuzz/CMakeLists.txt: a new target's library joins
# this list) and the targets themselves. Not the rest of the program nor the tests: no
# fuzzer reaches them, and the comparison hooks slow the suite that runs in the same build
# (decision 049).
set(healthhook_fuzzed_libraries hh_common hh_signature hh_config hh_http hh_events hh_rows hh_fetch_plan hh_replay)
add_library(healthhook_fuzz_coverage INTERFACE)
if(HEALTHHOOK_FUZZ)
  # ASan + UBSan everywhere; the fuzz targets add the libFuzzer main.
  # -fno-sanitize=function: clang 14's function sanitizer fails on C++20 coroutines
  # ("Cannot represent a difference across sections").
  target_compile_options(healthhook_flags INTERFACE -fsanitize=address,undefined
                         -fno-sanitize=function -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(healthhook_flags INTERFACE -fsanitize=address,undefined)
  target_compile_options(healthhook_fuzz_coverage INTERFACE -fsanitize=fuzzer-no-link)
endif()
if(HEALTHHOOK_TSAN)
  # -Wno-tsan (GCC only; the `tsan` preset uses GCC): GCC 12 warns at every inlined
  # std::atomic_thread_fence that ThreadSanitizer does not model fences (638 times in one
  # build, all in Asio's std_fenced_block around a handler's call). Asio hands work between
  # threads through its scheduler's mutex, which ThreadSanitizer does see; our own code has
  # no fences.
  target_compile_options(healthhook_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  target_link_options(healthhook_flags INTERFACE -fsanitize=thread)
endif()

# What a library's sources see, and what it shows (issue 32): the program's folders include
# each other only through the headers each folder lists as public. A folder's libraries
# get two include trees under the build folder, made of symbolic links to the sources
# (<id> is the folder's path with '.' for '/', e.g. common.http_client):
#   include/<id>/<folder>/…          only the headers the folder's CMakeLists.txt passes to
#                                    healthhook_public_headers(); what links one of its
#                                    libraries sees these (INTERFACE)
#   include-private/<id>/<folder>    the whole folder, for its own sources (PRIVATE)
# so that `#include "store/sqlite/database.h"` outside store/ fails to compile instead of
# quietly reaching past the store's interfaces. Includes keep their paths from the top of
# the tree ("store/inbox.h"). The tests and the benchmarks are white-box: they see the
# whole tree (tests/CMakeLists.txt, bench/CMakeLists.txt).
set(healthhook_tests_dir "${PROJECT_SOURCE_DIR}/tests")

# The calling folder, relative to the top, and its id in the include trees.
macro(healthhook_folder_id)
  file(RELATIVE_PATH folder "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  string(REPLACE "/" "." folder_id "${folder}")
endmacro()

# healthhook_public_headers(header…): the headers of the calling folder (paths relative to
# it) that other folders may include. Call it before the folder's healthhook_library().
function(healthhook_public_headers)
  healthhook_folder_id()
  set(tree "${PROJECT_BINARY_DIR}/include/${folder_id}")
  file(REMOVE_RECURSE "${tree}")  # a header taken off the list must disappear
  foreach(header IN LISTS ARGN)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${header}")
      message(FATAL_ERROR "healthhook_public_headers: ${folder}/${header} does not exist")
    endif()
    cmake_path(GET header PARENT_PATH sub)
    file(MAKE_DIRECTORY "${tree}/${folder}/${sub}")
    file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}/${header}" "${tree}/${folder}/${header}" SYMBOLIC)
  endforeach()
  set(healthhook_public_tree "${tree}" PARENT_SCOPE)
endfunction()

# healthhook_inner_headers(name header…): headers of the calling folder that the libraries
# of its subfolders build on, and no other folder (store/'s table descriptions and shared
# rules, for its backends store/sqlite/ and store/postgres/): an INTERFACE library `name`
# whose include tree (include-inner/<id>/<folder>/…) holds only these. Link it PRIVATE, so
# that it reaches no further than the library that links it.
function(healthhook_inner_headers name)
  healthhook_folder_id()
  set(tree "${PROJECT_BINARY_DIR}/include-inner/${folder_id}")
  file(REMOVE_RECURSE "${tree}")
  foreach(header IN LISTS ARGN)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${header}")
      message(FATAL_ERROR "healthhook_inner_headers: ${folder}/${header} does not exist")
    endif()
    cmake_path(GET header PARENT_PATH sub)
    file(MAKE_DIRECTORY "${tree}/${folder}/${sub}")
    file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}/${header}" "${tree}/${folder}/${header}" SYMBOLIC)
  endforeach()
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE "${tree}")
endfunction()

# healthhook_folder_includes(target): the calling folder's own sources, whole, for
# `target` (a library or the program); the folder's public headers for what links it.
function(healthhook_folder_includes target)
  healthhook_folder_id()
  set(root "${PROJECT_BINARY_DIR}/include-private/${folder_id}")
  if(NOT IS_SYMLINK "${root}/${folder}")
    cmake_path(GET folder PARENT_PATH parent)
    file(MAKE_DIRECTORY "${root}/${parent}")
    file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}" "${root}/${folder}" SYMBOLIC)
  endif()
  target_include_directories(${target} PRIVATE "${root}")
  # (A subfolder inherits its parent's variable: only this folder's own list counts.)
  if(healthhook_public_tree STREQUAL "${PROJECT_BINARY_DIR}/include/${folder_id}")
    target_include_directories(${target} INTERFACE "${healthhook_public_tree}")
  endif()
endfunction()

# healthhook_library(name SOURCES ...): a stage library with our defaults.
function(healthhook_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC healthhook_options)
  cmake_path(IS_PREFIX healthhook_tests_dir "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE in_tests)
  if(in_tests)
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  else()
    healthhook_folder_includes(${name})
    if(name IN_LIST healthhook_fuzzed_libraries)
      target_link_libraries(${name} PRIVATE healthhook_fuzz_coverage)
    endif()
  endif()
endfunction()
