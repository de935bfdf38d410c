# Writes OUTPUT (a header defining MBRIDGE_LINT_COMMIT) with the commit the source tree is at, for `--version`.
# Run at every build (the target in CMakeLists.txt); the file is rewritten only when the commit changes, so only
# what includes it is rebuilt. Outside a git checkout (a release tarball) the commit is "unknown".
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "+changes")  # built from a tree with uncommitted changes
  endif()
endif()
set(text "#pragma once\n#define MBRIDGE_LINT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
