// The one main() of every test module, compiled once instead of once per module (each
// generated main parsed Boost.Test again: about 2 s of compile time per module). The
// master test suite takes the executable's name, which Boost.Test prints in its report.
#include <boost/test/unit_test.hpp>

#include <filesystem>

namespace {

bool name_the_module_after_the_executable() {
  auto& master = boost::unit_test::framework::master_test_suite();
  if (master.argc > 0) {
    master.p_name.value = std::filesystem::path(master.argv[0]).filename().string();
  }
  return true;
}

}  // namespace

int main(int argc, char* argv[]) {
  return boost::unit_test::unit_test_main(&name_the_module_after_the_executable, argc, argv);
}
