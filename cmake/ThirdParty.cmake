# The third-party libraries as the layers link them, one interface target each: mbridge_lint_fmt, mbridge_lint_yaml_cpp,
# mbridge_lint_toml, mbridge_lint_tree_sitter. By default yaml-cpp and tree-sitter are the Debian packages' shared
# libraries. With MBRIDGE_LINT_STATIC (the `static` preset: the release's binary, wheel and .deb) they are Debian's
# static archives, and the C++ runtime is linked in, so that the binary needs nothing but glibc: it runs on any x86-64
# Linux whose glibc is as new as the build machine's (Debian 12: 2.36).
# fmt and toml++ are compiled in (Debian ships no static fmt: fmt's implementation is compiled once, in
# cmake/fmt_compiled.cpp, and toml++ is header-only) in the static build and in the default one alike, so that
# both compile each source with the same flags and only their links differ: the package test's static build
# (tests/package/test_release.sh) then takes every object from ccache instead of compiling the product again.
# The sanitizer builds share objects with no other and link Debian's shared fmt and toml++, which compiles faster.
# Included after the find_package calls of the root CMakeLists.txt.
add_library(mbridge_lint_fmt INTERFACE)
add_library(mbridge_lint_yaml_cpp INTERFACE)
add_library(mbridge_lint_toml INTERFACE)
add_library(mbridge_lint_tree_sitter INTERFACE)
# The allocator of the mbridge-lint binary alone (MBRIDGE_LINT_JEMALLOC): jemalloc's malloc and free take the place of
# glibc's, for the C++ runtime too. Empty when off.
add_library(mbridge_lint_malloc INTERFACE)

if((MBRIDGE_LINT_SANITIZE OR MBRIDGE_LINT_FUZZ) AND NOT MBRIDGE_LINT_STATIC)
  target_link_libraries(mbridge_lint_fmt INTERFACE fmt::fmt)
  target_link_libraries(mbridge_lint_toml INTERFACE tomlplusplus::tomlplusplus)
else()
  # fmt's headers, and its implementation compiled once (not FMT_HEADER_ONLY, which compiles it into every source).
  get_target_property(fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  add_library(mbridge_lint_fmt_compiled STATIC ${CMAKE_CURRENT_SOURCE_DIR}/cmake/fmt_compiled.cpp)
  target_include_directories(mbridge_lint_fmt_compiled SYSTEM PUBLIC ${fmt_includes})
  set_target_properties(mbridge_lint_fmt_compiled PROPERTIES POSITION_INDEPENDENT_CODE ON UNITY_BUILD OFF)
  target_link_libraries(mbridge_lint_fmt INTERFACE mbridge_lint_fmt_compiled)
  # toml++: its header-only mode (Debian's CMake package points at the shared library).
  get_target_property(toml_includes tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(mbridge_lint_toml INTERFACE ${toml_includes})
  target_compile_definitions(mbridge_lint_toml INTERFACE TOML_HEADER_ONLY=1)
endif()

if(NOT MBRIDGE_LINT_STATIC)
  if(MBRIDGE_LINT_JEMALLOC)
    pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
    target_link_libraries(mbridge_lint_malloc INTERFACE PkgConfig::JEMALLOC)
  endif()
  target_link_libraries(mbridge_lint_yaml_cpp INTERFACE yaml-cpp)
  target_link_libraries(mbridge_lint_tree_sitter INTERFACE PkgConfig::TREE_SITTER)
  return()
endif()

# A static archive beside the shared library a Debian -dev package installs; FATAL_ERROR names the package otherwise.
function(mbridge_lint_static_archive var name package)
  find_library(${var} NAMES lib${name}.a)
  if(NOT ${var})
    message(FATAL_ERROR "MBRIDGE_LINT_STATIC needs lib${name}.a (Debian package ${package})")
  endif()
endfunction()

mbridge_lint_static_archive(MBRIDGE_LINT_YAML_CPP_ARCHIVE yaml-cpp libyaml-cpp-dev)
get_target_property(yaml_cpp_includes yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(mbridge_lint_yaml_cpp INTERFACE ${yaml_cpp_includes})
target_link_libraries(mbridge_lint_yaml_cpp INTERFACE ${MBRIDGE_LINT_YAML_CPP_ARCHIVE})

mbridge_lint_static_archive(MBRIDGE_LINT_TREE_SITTER_ARCHIVE tree-sitter libtree-sitter-dev)
target_include_directories(mbridge_lint_tree_sitter INTERFACE ${TREE_SITTER_INCLUDE_DIRS})
target_link_libraries(mbridge_lint_tree_sitter INTERFACE ${MBRIDGE_LINT_TREE_SITTER_ARCHIVE})

# jemalloc's position-independent archive (the binary is a PIE); it needs the threads and dl parts of glibc.
if(MBRIDGE_LINT_JEMALLOC)
  mbridge_lint_static_archive(MBRIDGE_LINT_JEMALLOC_ARCHIVE jemalloc_pic libjemalloc-dev)
  target_link_libraries(mbridge_lint_malloc INTERFACE ${MBRIDGE_LINT_JEMALLOC_ARCHIVE} Threads::Threads ${CMAKE_DL_LIBS})
endif()

# The C++ runtime and libgcc in the binary: other distributions' libstdc++ may lack the GLIBCXX versions GCC 12 needs
# (built on Debian 12, the binary then needs glibc 2.36, for the arc4random that libstdc++ calls).
add_link_options(-static-libstdc++ -static-libgcc)
