// The source hh_test_pch needs to build its precompiled header (tests/CMakeLists.txt);
// the test modules reuse that header. Nothing links this object.
