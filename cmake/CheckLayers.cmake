# The layering check (docs/development.md, "Layers"): every #include "<folder>/..." of a layer's source files must name its own
# folder or a layer it links, directly or through the layers below. Run by the build before any layer compiles, and
# by the `layering` tests.
#
#   cmake -DSOURCE_DIR=<tree> -DTABLE=<file> [-DSTAMP=<file>] -P CheckLayers.cmake
#
# TABLE holds one line per layer: its folder, a colon, and the folders it may include (itself and every layer below
# it), separated by spaces. The build writes it from the layer targets in CMakeLists.txt.
cmake_minimum_required(VERSION 3.22)
file(STRINGS ${TABLE} rows)
set(layers "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^([^:]+):(.*)$" _ "${row}")
  set(layer ${CMAKE_MATCH_1})
  string(STRIP "${CMAKE_MATCH_2}" allowed)
  separate_arguments(allowed_${layer} UNIX_COMMAND "${allowed}")
  list(APPEND layers ${layer})
endforeach()

set(violations "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE sources LIST_DIRECTORIES false RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/${layer}/*.cpp ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cu ${SOURCE_DIR}/${layer}/*.cuh)
  foreach(source IN LISTS sources)
    file(STRINGS ${SOURCE_DIR}/${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    get_filename_component(source_dir ${source} DIRECTORY)
    set(line_no 0)
    foreach(line IN LISTS includes)
      string(REGEX MATCH "\"([^\"]+)\"" _ "${line}")
      set(target ${CMAKE_MATCH_1})
      if(target MATCHES "^\\.")
        # A relative include names a file beside this one: resolve it to a path in the tree.
        get_filename_component(resolved ${SOURCE_DIR}/${source_dir}/${target} ABSOLUTE)
        file(RELATIVE_PATH target ${SOURCE_DIR} ${resolved})
      endif()
      string(REGEX MATCH "^[^/]+" folder "${target}")
      if(NOT target MATCHES "/" OR NOT folder IN_LIST layers)
        continue()  # a system, library or generated header
      endif()
      if(NOT folder IN_LIST allowed_${layer})
        string(REPLACE ";" ", " may "${allowed_${layer}}")
        list(APPEND violations "${source}: #include \"${target}\": layer ${layer} may include only ${may}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "upward include (a layer includes a layer above it or beside it):\n  ${text}\n"
                      "Move the code to the lowest layer that needs it (docs/development.md, \"Layers\").")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
