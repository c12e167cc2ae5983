# The layers: runtime/ ← jit/ ← repl/. kiln_layer(TARGET DIR MAY_USE...) makes TARGET's build
# check that no source under DIR includes a kiln header (or Lua) from a folder it may not use, so
# an upward include fails the build, not only its link. The same check runs once when CMake
# configures. Run as a script (cmake -DDIR=... -DALLOWED=... -P layers.cmake) it checks one
# folder.

cmake_policy(SET CMP0057 NEW)  # IN_LIST (a script has no project policies)

# Fails with a message naming the file and the include when a source under dir includes from a
# folder outside the allowed list.
function(kiln_check_includes dir)
  set(allowed ${ARGN})
  file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.h)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](runtime|jit|repl)/|^[ \t]*#[ \t]*include[ \t]*[<\"]lua")
    foreach(line ${lines})
      string(REGEX MATCH "[<\"]([a-z]+)" m "${line}")
      set(folder ${CMAKE_MATCH_1})
      if(NOT folder IN_LIST allowed)
        message(FATAL_ERROR "kiln layers: ${f} includes from ${folder}/ (${line}); "
                            "${dir} may use only: ${allowed} (docs/architecture.md)")
      endif()
    endforeach()
  endforeach()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  string(REPLACE "," ";" allowed "${ALLOWED}")
  kiln_check_includes(${DIR} ${allowed})
  file(TOUCH ${STAMP})
  return()
endif()

# Checks DIR now and on every build of TARGET that follows a change to one of its sources.
function(kiln_layer target dir)
  kiln_check_includes(${dir} ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.h)
  string(REPLACE ";" "," allowed "${ARGN}")
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${target}.layers)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DALLOWED=${allowed} -DSTAMP=${stamp}
            -P ${PROJECT_SOURCE_DIR}/cmake/layers.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/layers.cmake
    COMMENT "Checking the includes of ${target} (runtime <- jit <- repl)" VERBATIM)
  add_custom_target(${target}_layers DEPENDS ${stamp})
  add_dependencies(${target} ${target}_layers)
endfunction()
