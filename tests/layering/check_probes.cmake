# cmake -DBUILD_DIR=… -P check_probes.cmake: the public probe builds, the private one fails
# because its header is not found (not for any other reason).
function(build_probe target result_var output_var)
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target ${target}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${result_var} "${result}" PARENT_SCOPE)
  set(${output_var} "${output}" PARENT_SCOPE)
endfunction()

build_probe(layering_public_probe result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "a public header of store/ does not compile outside store/:\n${output}")
endif()
build_probe(layering_private_probe result output)
if(result EQUAL 0)
  message(FATAL_ERROR "store/sqlite/database.h compiled outside store/: the SQLite backend is visible to other folders")
endif()
# GCC: "store/sqlite/database.h: No such file or directory"; clang: "'store/sqlite/database.h' file not found"
if(NOT output MATCHES "store/sqlite/database\\.h'?:? (No such file or directory|file not found)")
  message(FATAL_ERROR "the private probe failed, but not for its header:\n${output}")
endif()
message(STATUS "store/sqlite/database.h is out of reach outside store/; store/processing_store.h is not")
