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
# libFuzzer's coverage instrumentation, for what the fuzz targets explore: the program's
# libraries (healthhook_library outside tests/) and the targets themselves. Not the tests:
# there it would only cost compile time (a quarter of a source's, at -O0).
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
  # -Wno-tsan (GCC only; the `tsan` preset uses clang): GCC 12 warns at every inlined
  # std::atomic_thread_fence that ThreadSanitizer does not model fences (638 times in one
  # build, all in Asio's std_fenced_block around a handler's call). Asio hands work between threads through its scheduler's mutex, which
  # ThreadSanitizer does see; our own code has no fences.
  target_compile_options(healthhook_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  target_link_options(healthhook_flags INTERFACE -fsanitize=thread)
endif()

set(healthhook_tests_dir "${PROJECT_SOURCE_DIR}/tests")
# healthhook_library(name SOURCES ...): a stage library with our defaults.
function(healthhook_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC healthhook_options)
  cmake_path(IS_PREFIX healthhook_tests_dir "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE in_tests)
  if(NOT in_tests)
    target_link_libraries(${name} PRIVATE healthhook_fuzz_coverage)
  endif()
endfunction()
