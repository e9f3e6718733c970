# Included by ctest after the discovered GoogleTest tests (tests/CMakeLists.txt): every test that
# uses a GPU (the Cuda* tests, the MPI ranks sharing a GPU, the thread shares on GPUs) asks for one GPU slot and is labelled
# gpu. `ctest --resource-spec-file` (scripts/gpu-check.sh --phase suite writes one from
# nvidia-smi -L) then spreads them over the host's GPUs: ctest sets CTEST_RESOURCE_GROUP_0_GPUS
# and the test binary narrows CUDA_VISIBLE_DEVICES to that GPU (tests/test_util.cpp), for itself
# and the vczstats processes it starts. Without a spec file ctest ignores the resource groups.
foreach(_vcz_test IN LISTS vczstats_tests_TESTS)
  if(_vcz_test MATCHES "Cuda|TwoRanksSharingOneGpu|ThreadSharesGpu")
    set_tests_properties("${_vcz_test}" PROPERTIES RESOURCE_GROUPS "gpus:1" LABELS gpu)
  endif()
endforeach()
