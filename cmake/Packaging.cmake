# Installation and the Debian package. `cmake --install build` installs the binary (the schemas are compiled into it)
# in bin/, the documentation and examples in share/doc/mbridge-lint/, and the editor, pre-commit, CI and Bridge
# integrations in share/mbridge-lint/; `cpack -G DEB` (run in the build folder) packages the same files.
# tests/package/test_deb.sh installs the package in a fresh Debian 12 root (ctest label `slow`).
include(GNUInstallDirs)
set(MBRIDGE_LINT_INSTALL_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/mbridge-lint)
set(MBRIDGE_LINT_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/mbridge-lint)

install(TARGETS mbridge-lint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md DESTINATION ${MBRIDGE_LINT_INSTALL_DOCDIR})
# README.md links every page of docs/; memory/ and gpu_check/ hold the derivations the pages link.
file(GLOB MBRIDGE_LINT_DOC_PAGES ${CMAKE_CURRENT_SOURCE_DIR}/docs/*.md)
install(FILES ${MBRIDGE_LINT_DOC_PAGES} DESTINATION ${MBRIDGE_LINT_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${MBRIDGE_LINT_INSTALL_DOCDIR}/examples)
install(FILES integrations/editors/mbridge-lint.lua integrations/editors/mbridge-lint.el
        DESTINATION ${MBRIDGE_LINT_INSTALL_DATADIR}/editors)
install(DIRECTORY integrations/editors/vscode DESTINATION ${MBRIDGE_LINT_INSTALL_DATADIR}/editors)
install(FILES integrations/github/mbridge-lint.yml DESTINATION ${MBRIDGE_LINT_INSTALL_DATADIR}/github)
install(FILES .pre-commit-hooks.yaml DESTINATION ${MBRIDGE_LINT_INSTALL_DATADIR}/pre-commit RENAME hooks.yaml)
# The Python helper of `gpu-check --runner`; an installed binary looks for it here (cli/gpu_check_command.cpp).
install(DIRECTORY integrations/bridge/ DESTINATION ${MBRIDGE_LINT_INSTALL_DATADIR}/bridge
        PATTERN test_* EXCLUDE PATTERN __pycache__ EXCLUDE)
target_compile_definitions(mbridge-lint PRIVATE
                           MBRIDGE_LINT_INSTALLED_BRIDGE_HELPER="${MBRIDGE_LINT_INSTALL_DATADIR}/bridge")

set(CPACK_PACKAGE_NAME mbridge-lint)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "mbridge-lint developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "linter for the activation-recompute settings of Megatron Bridge configs")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}
 mbridge-lint reads Megatron Bridge YAML configs and Python recipes without running them, works out the model
 config a job will see for a given Megatron Core revision, and reports every invalid or wasteful recompute_*
 setting, pointing at the line that set it.")
# Depends: the packages of the shared libraries the binary links (dpkg-shlibdeps). cuBLAS, which the GPU check opens
# at run time, is not one of them. git is only needed by `check --changed-only`.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS git)
include(CPack)

if(MBRIDGE_LINT_BUILD_TESTS)
  add_test(NAME package_deb COMMAND ${PROJECT_SOURCE_DIR}/tests/package/test_deb.sh ${PROJECT_BINARY_DIR})
  # SKIP_RETURN_CODE: not root (chroot needs it). Building the Debian root the first time takes minutes.
  set_tests_properties(package_deb PROPERTIES LABELS "package;slow" SKIP_RETURN_CODE 77 TIMEOUT 1200)
  # The release (scripts/release.sh: wheel, .deb, tarball, pre-commit hook bundle) installed and run in a fresh Debian
  # 12 root without a compiler; its static build stays in <build folder>-static/ between runs, its objects from ccache.
  add_test(NAME package_release COMMAND ${PROJECT_SOURCE_DIR}/tests/package/test_release.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(package_release PROPERTIES LABELS "package;slow" SKIP_RETURN_CODE 77 TIMEOUT 3600)
  # The longest tests start first (ctest runs the costliest first until it has timings of its own).
  set_tests_properties(package_release package_deb PROPERTIES COST 1000)
endif()
