# rcsim_test(NAME SOURCES ... LIBS ... [LABELS LABEL] [SERIAL]): a GoogleTest binary registered with
# ctest.
# A test carries one label: the given one (`contract`, `e2e`), or `unit` when none is given; in a
# folder that sets RCSIM_THREADED_TESTS (backends/, apps/, tests/: threads or real processes) it gets
# the suffix `-threaded` ("unit-threaded", "e2e-threaded"). ctest -L takes a regular expression, so
# `-L unit` still selects every unit test and `-L threaded` the tests CI runs under TSan. (One label
# string, because gtest_discover_tests does not pass list-valued properties through.) The target
# `threaded_tests` builds just those binaries but the fault tests (and the apps), for the TSan build.
# SERIAL: its tests never run alongside another test (ctest RUN_SERIAL), for tests that measure
# latencies.
function(rcsim_test name)
  cmake_parse_arguments(T "SERIAL" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest GTest::gtest_main)
  # A test's own sources compile at -O1 in the optimised builds: about a quarter less compile time
  # than -O2 (gtest's macros expand to much code), and the code under test, in the libraries, keeps the
  # build type's level.
  if(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Release|MinSizeRel)$")
    target_compile_options(${name} PRIVATE -O1)
  endif()
  list(LENGTH T_LABELS _n)
  if(_n GREATER 1)
    message(FATAL_ERROR "rcsim_test(${name}): one label only (got ${T_LABELS})")
  elseif(_n EQUAL 1)
    set(_label ${T_LABELS})
  else()
    set(_label unit)
  endif()
  if(RCSIM_THREADED_TESTS)
    string(APPEND _label "-threaded")
    # The TSan run leaves the fault tests out (-LE faults), so threaded_tests does not build them.
    if(NOT _label MATCHES "^faults")
      set_property(GLOBAL APPEND PROPERTY RCSIM_THREADED_TEST_TARGETS ${name})
    endif()
  endif()
  if(T_SERIAL)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${_label} RUN_SERIAL TRUE)
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${_label})
  endif()
endfunction()

# rcsim_folder(LIB DEPS ... [TEST_DEPS ...] [THREADED_TESTS NAME ...] [UNTHREADED_TESTS NAME ...]): the
# library of one folder, made of its *.cc files except *_test.cc, and one test binary per *_test.cc
# (linking LIB and TEST_DEPS). Tests named *_contract_test get the ctest label `contract`; those named in
# THREADED_TESTS the `-threaded` suffix even where the folder does not set RCSIM_THREADED_TESTS (a test
# of threads in a single-threaded layer); those named in UNTHREADED_TESTS go without it in a folder that
# sets it (a test that calls pure functions from one thread, where TSan has nothing to find: the TSan
# tree neither builds nor runs it). Adding a source or a test needs no CMake edit.
function(rcsim_folder lib)
  cmake_parse_arguments(F "" "" "DEPS;TEST_DEPS;THREADED_TESTS;UNTHREADED_TESTS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER _srcs EXCLUDE REGEX "_test\\.cc$")
  if(_srcs)
    add_library(${lib} ${_srcs})
    target_link_libraries(${lib} PUBLIC ${F_DEPS})
  else()
    add_library(${lib} INTERFACE)
    target_link_libraries(${lib} INTERFACE ${F_DEPS})
  endif()
  file(GLOB _tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  foreach(_t ${_tests})
    get_filename_component(_n ${_t} NAME_WE)
    if(_n MATCHES "_contract_test$")
      set(_labels contract)
    else()
      set(_labels unit)
    endif()
    set(_folder_threaded ${RCSIM_THREADED_TESTS})
    if(_n IN_LIST F_THREADED_TESTS)
      set(RCSIM_THREADED_TESTS ON)
    elseif(_n IN_LIST F_UNTHREADED_TESTS)
      set(RCSIM_THREADED_TESTS OFF)
    endif()
    rcsim_test(${_n} SOURCES ${_t} LIBS ${lib} ${F_TEST_DEPS} LABELS ${_labels})
    set(RCSIM_THREADED_TESTS ${_folder_threaded})
  endforeach()
  foreach(_n ${F_UNTHREADED_TESTS} ${F_THREADED_TESTS})
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_n}.cc)
      message(FATAL_ERROR "rcsim_folder(${lib}): no ${_n}.cc for THREADED_TESTS/UNTHREADED_TESTS")
    endif()
  endforeach()
endfunction()

# Adds every subfolder of the current folder that has a CMakeLists.txt.
function(rcsim_add_subfolders)
  file(GLOB _children LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(_c ${_children})
    if(IS_DIRECTORY ${_c} AND EXISTS ${_c}/CMakeLists.txt)
      add_subdirectory(${_c})
    endif()
  endforeach()
endfunction()
