# Installation layout and the Debian package (cpack -G DEB).
#
#   <prefix>/bin/healthhook
#   <prefix>/lib/systemd/system/healthhook.service   (ExecStart= points at <prefix>/bin)
#   <prefix>/share/man/man1/healthhook*.1.gz
#   <prefix>/share/doc/healthhook/                    (component "documentation")
#       README.md, docs/, systemd/README.md, systemd/healthhook.toml (the example config),
#       schemas/, store/{sqlite,postgres}/migrations/*.sql, bench/README.md,
#       processor/README.md, tests/faults/README.md
#
# The documentation keeps the repository's own layout under the doc folder, so that every
# relative link of its pages resolves installed as it does in a clone (renaming a page, as
# systemd.md once was, broke the links to and from it). A page that links to another file
# of the repository needs that file listed here: tests/ops/installed_documentation_test
# installs this component and follows every link.
#
# The .deb installs under CMAKE_INSTALL_PREFIX too, so that the unit and the binary agree:
# configure with -DCMAKE_INSTALL_PREFIX=/usr for a package (README.md shows how). It holds
# every component (no CPACK_DEB_COMPONENT_INSTALL). The binary itself is installed by
# cli/CMakeLists.txt.
include(GNUInstallDirs)

# The unit in the source tree names /usr/bin/healthhook (so that it can be checked as it
# is); the installed copy names the binary where this prefix puts it.
set(healthhook_unit_source "${PROJECT_SOURCE_DIR}/systemd/healthhook.service")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${healthhook_unit_source}")
file(READ "${healthhook_unit_source}" healthhook_unit)
string(REPLACE "/usr/bin/healthhook" "${CMAKE_INSTALL_FULL_BINDIR}/healthhook" healthhook_unit "${healthhook_unit}")
string(REPLACE "/usr/share/doc/healthhook" "${CMAKE_INSTALL_FULL_DOCDIR}" healthhook_unit "${healthhook_unit}")
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/systemd/healthhook.service" CONTENT "${healthhook_unit}" @ONLY)

install(FILES "${PROJECT_BINARY_DIR}/systemd/healthhook.service" DESTINATION lib/systemd/system)

# The documentation, each file at its path in the repository (see the top of this file).
set(healthhook_doc_files README.md systemd/README.md systemd/healthhook.toml bench/README.md
    processor/README.md tests/faults/README.md)
foreach(file IN LISTS healthhook_doc_files)
  cmake_path(GET file PARENT_PATH folder)
  install(FILES "${file}" DESTINATION "${CMAKE_INSTALL_DOCDIR}/${folder}" COMPONENT documentation)
endforeach()
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs  # the manual, decisions included
        COMPONENT documentation)
# The event families' JSON Schemas and examples (schemas/README.md), not the script that
# checks them in a clone.
install(DIRECTORY schemas/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/schemas COMPONENT documentation
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json")
# The tables' reference: one SQL comment per column (docs/data-model.md sends readers there).
foreach(backend sqlite postgres)
  install(DIRECTORY store/${backend}/migrations/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/store/${backend}/migrations
          COMPONENT documentation FILES_MATCHING PATTERN "*.sql")
endforeach()

# Manual pages, written by the program from its own --help text (`healthhook man`), so they
# cannot say other than the binary they ship with; gzipped as Debian policy asks. Not in the
# sanitizer builds, which never install (and would run an instrumented binary to build).
if(NOT HEALTHHOOK_ASAN AND NOT HEALTHHOOK_TSAN AND NOT HEALTHHOOK_FUZZ)
  set(healthhook_man_dir "${PROJECT_BINARY_DIR}/man")
  add_custom_command(OUTPUT "${healthhook_man_dir}/stamp"
    COMMAND "${CMAKE_COMMAND}" -E rm -rf "${healthhook_man_dir}"
    COMMAND healthhook man --output "${healthhook_man_dir}"
    COMMAND sh -c "gzip -9n -f \"$1\"/*.1" sh "${healthhook_man_dir}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${healthhook_man_dir}/stamp"
    DEPENDS healthhook
    COMMENT "Writing the manual pages (healthhook man)"
    VERBATIM)
  add_custom_target(man_pages ALL DEPENDS "${healthhook_man_dir}/stamp")
  install(DIRECTORY "${healthhook_man_dir}/" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          FILES_MATCHING PATTERN "*.1.gz")
endif()

# ---- CPack: Debian package ----
set(CPACK_PACKAGE_NAME healthhook)
set(CPACK_PACKAGE_VENDOR "healthhook")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "healthhook verifies the signed webhook deliveries of a health-data service, stores each one durably in SQLite before acknowledging it, derives deduplicated tables from them and fetches follow-up data. Runs as a hardened systemd service.")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo binaries carry tens of MB of debug info
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # healthhook_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(HEALTHHOOK_PACKAGE_MAINTAINER "healthhook maintainers <healthhook@localhost>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${HEALTHHOOK_PACKAGE_MAINTAINER}")
# Runtime dependencies from the libraries the binary links (dpkg-shlibdeps, from
# dpkg-dev): libssl3, libsqlite3-0, libsystemd0, libtomlplusplus3, libsimdjson14,
# libboost-url1.81.0, zlib1g, libstdc++6, libc6 on Debian 12.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "systemd, sqlite3")
# daemon-reload after install/removal so the unit is known at once; never enabled or
# started by the package: it needs a signing secret first (README.md).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/systemd/debian/postinst;${PROJECT_SOURCE_DIR}/systemd/debian/prerm;${PROJECT_SOURCE_DIR}/systemd/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR DEB)
include(CPack)
