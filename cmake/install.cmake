# Install rules and the CMake package config of vczstats (included by the top-level
# CMakeLists.txt after the library and the CLI are defined).
#
# The library is static: its private dependencies travel with it as link-only entries, so the
# package config finds them again (cmake/vczstatsConfig.cmake.in): the Debian libraries the
# build looked up by hand (vcz::blosc, ...) at the paths this build used, and the CMake
# packages (fmt, nlohmann_json, ZLIB, BZip2, Threads, CUDAToolkit) with find_dependency.
include(CMakePackageConfigHelpers)

set(VCZSTATS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/vczstats
  CACHE STRING "Where the CMake package of vczstats is installed (relative to the prefix)")

install(TARGETS vczstats_core EXPORT vczstatsTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# testing.hpp: the test and benchmark hooks, not part of the installed API.
install(DIRECTORY include/vczstats DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" PATTERN "testing.hpp" EXCLUDE)
if(TARGET vczstats)
  install(TARGETS vczstats RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT vczstatsTargets NAMESPACE vczstats:: FILE vczstatsTargets.cmake
  DESTINATION ${VCZSTATS_INSTALL_CMAKEDIR})

# The libraries found by vcz_find_library that the library links: name=path pairs for the
# config, which makes the imported targets vcz::<name> again.
set(VCZSTATS_FOUND_LIBRARIES "")
foreach(_lib blosc zstd lz4 isal hts)
  if(TARGET vcz::${_lib})
    list(APPEND VCZSTATS_FOUND_LIBRARIES "${_lib}=${${_lib}_LIBRARY}")
  endif()
endforeach()
set(VCZSTATS_WITH_CUDA ${VCZSTATS_CUDA})

configure_package_config_file(cmake/vczstatsConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/vczstatsConfig.cmake
  INSTALL_DESTINATION ${VCZSTATS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/vczstatsConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/vczstatsConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/vczstatsConfigVersion.cmake
  DESTINATION ${VCZSTATS_INSTALL_CMAKEDIR})
