# Test helpers in the style of KaMPIng's: an MPI test is registered once per process count
# as <name>.<p>ranks and runs under the configured MPI launcher.
include(GoogleTest)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

set(NBR_TEST_ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
# Open MPI's start-up, which the tests pay a few hundred times: every process probes the cm
# PML's network layers before choosing ob1 (0.2 s each on a machine without a fabric), and a
# process started without mpirun (nbrc run directly) forks a daemon first (another 0.2 s).
# The tests ask for ob1, the PML chosen anyway, and keep such processes alone; the nbrc
# command-line tests take 18 s instead of 67. MPICH ignores both.
list(APPEND NBR_TEST_ENVIRONMENT "OMPI_MCA_pml=ob1" "OMPI_MCA_ess_singleton_isolated=1")
# The tests' scratch directories go under the build tree (nbr::test::temp_root(), the CLI
# scripts' mktemp): what a test that aborts leaves behind goes with the build, not into /tmp.
set(NBR_TEST_TMPDIR "${CMAKE_BINARY_DIR}/test-tmp")
file(MAKE_DIRECTORY "${NBR_TEST_TMPDIR}")
list(APPEND NBR_TEST_ENVIRONMENT "NBR_TEST_TMPDIR=${NBR_TEST_TMPDIR}")
if(NBR_SANITIZE)
  list(APPEND NBR_TEST_ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1" "NBR_SANITIZED=1")
endif()

# nbr_mpi_launcher(<var> <ranks>): command prefix that runs <ranks> processes.
function(nbr_mpi_launcher var ranks)
  set(launcher ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks})
  if(NBR_MPI_IS_OPENMPI)
    list(APPEND launcher --oversubscribe)
  endif()
  list(APPEND launcher ${MPIEXEC_PREFLAGS})
  set(${var} ${launcher} PARENT_SCOPE)
endfunction()

# nbr_add_mpi_test(<name> FILES <src>... RANKS <p>... [LIBRARIES <lib>...] [TIMEOUT s] [LABELS l...]
#                  [THREAD_MULTIPLE])   (THREAD_MULTIPLE: main asks MPI for MPI_THREAD_MULTIPLE)
function(nbr_add_mpi_test name)
  cmake_parse_arguments(ARG "THREAD_MULTIPLE" "TIMEOUT" "FILES;RANKS;LIBRARIES;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(main nbr_test_mpi_main)
  if(ARG_THREAD_MULTIPLE)
    set(main nbr_test_mpi_main_multiple)
  endif()
  add_executable(${name} ${ARG_FILES})
  target_link_libraries(${name} PRIVATE ${main} ${ARG_LIBRARIES} nbr_warnings)
  foreach(p IN LISTS ARG_RANKS)
    nbr_mpi_launcher(launcher ${p})
    add_test(NAME ${name}.${p}ranks COMMAND ${launcher} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set(environment "${NBR_TEST_ENVIRONMENT};NBR_SHARED_DIR=${NBR_SHARED_DIR}")
    if(NOT NBR_MPI_IS_OPENMPI AND p GREATER 2)
      # MPICH busy-polls where ranks outnumber cores: the replay tests' product of every
      # topology and algorithm runs every third pair there (tests/mpi/replay_corpus.hpp).
      list(APPEND environment "NBR_TEST_CORPUS_STRIDE=3")
    endif()
    set_tests_properties(${name}.${p}ranks PROPERTIES
      ENVIRONMENT "${environment}"
      TIMEOUT ${ARG_TIMEOUT} LABELS "mpi;${ARG_LABELS}" PROCESSORS ${p})
  endforeach()
endfunction()

# nbr_add_unit_test(<name> FILES <src>... [LIBRARIES <lib>...]): plain GoogleTest binary.
function(nbr_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "FILES;LIBRARIES" ${ARGN})
  add_executable(${name} ${ARG_FILES})
  target_link_libraries(${name} PRIVATE GTest::gtest_main ${ARG_LIBRARIES} nbr_warnings)
  gtest_discover_tests(${name} PROPERTIES ENVIRONMENT "${NBR_TEST_ENVIRONMENT};NBR_SHARED_DIR=${NBR_SHARED_DIR}" LABELS "unit")
endfunction()
