// Starting a program with no shell (detail/run_program.hpp), writing a file whole or not at all
// (detail/output_file.hpp), and printing outside text safely (detail/printable.hpp): issue 78's items 1, 3 and 6.
#include <catch2/catch.hpp>

#include <trinity/detail/output_file.hpp>
#include <trinity/detail/printable.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/reports/gnuplot.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace io_programs_and_outputs_test {

using namespace trinity;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("trinity-outputs-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("a program runs from an argument vector: no byte of an argument is read by a shell", "[io][process]") {
  const auto d = scratch("argv");
  const std::string hostile =
      "a'; touch " + (d / "INJECTED").string() + "; echo '$(touch " + (d / "INJECTED").string() + ")\n`x`";
  const auto r = detail::run_program({"printf", "%s", hostile});
  CHECK(r.end.succeeded());
  CHECK(r.out == hostile);
  CHECK_FALSE(fs::exists(d / "INJECTED"));
  // Its input is handed over whole, its errors apart or merged, its end told as an exit code or a signal.
  CHECK(detail::run_program({"cat"}, std::string(300000, 'x')).out.size() == 300000);
  const auto both =
      detail::run_program({"sh", "-c", "echo out; echo err >&2; exit 3"}, {}, detail::error_stream::merged);
  CHECK(both.end.code == 3);
  CHECK(both.end.describe() == "exit code 3");
  CHECK(both.out.find("out") != std::string::npos);
  CHECK(both.out.find("err") != std::string::npos);
  const auto killed = detail::run_program({"sh", "-c", "kill -9 $$"});
  CHECK(killed.end.signal == 9);
  CHECK_THAT(killed.end.describe(), Catch::StartsWith("signal 9"));
  CHECK_THROWS_WITH(detail::run_program({d.string() + "/no-such-program"}), Catch::Contains("cannot start"));
  // A program that reads none of a large input does not take the caller down with SIGPIPE.
  CHECK(detail::run_program({"true"}, std::string(1 << 22, 'y')).end.succeeded());
  fs::remove_all(d);
}

TEST_CASE("a command line is printed as a shell reader would type it, control bytes escaped", "[io][process]") {
  CHECK(detail::shell_quoted(std::vector<std::string>{"build/bin/trinity-train", "--ranks", "4"}) ==
        "build/bin/trinity-train --ranks 4");
  CHECK(detail::shell_quoted("it's here") == "'it'\\''s here'");
  CHECK(detail::shell_quoted("a$(b)") == "'a$(b)'");
  CHECK(detail::shell_quoted("new\nline") == "$'new\\x0aline'");
  CHECK(detail::shell_quoted("") == "''");
  CHECK(detail::printable("a\x1b[31mred\x07\r\n\tok") == "a\\x1b[31mred\\x07\\x0d\n\tok");
}

TEST_CASE("a file is written whole or not at all, and a path it cannot be is refused first", "[io][output]") {
  const auto d = scratch("write");
  const auto file = (d / "out.txt").string();
  detail::write_output_file("--out", file, "first\n");
  CHECK(read(file) == "first\n");
  {
    detail::output_file out("--out", file);
    out.stream() << "second, never committed\n";
  }
  CHECK(read(file) == "first\n");  // left uncommitted: the old file stands, no temporary beside it
  CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 1);
  const auto refused = [](const std::string& path) {
    try {
      detail::write_output_file("--out", path, "x");
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("(written)");
  };
  CHECK_THAT(refused("/dev/full"), Catch::StartsWith("--out: /dev/full is not a regular file"));
  CHECK_THAT(refused(d.string()), Catch::Contains("is a directory"));
  CHECK_THAT(refused((d / "missing" / "x.txt").string()), Catch::Contains("does not exist; create it first"));
  CHECK_THAT(refused(""), Catch::Contains("an empty path"));
  CHECK_FALSE(fs::exists(d / "missing"));
  fs::remove_all(d);
}

TEST_CASE("gnuplot text is quoted so that nothing in it is read as a command", "[io][output]") {
  CHECK(reports::quoted("plain") == "'plain'");
  CHECK(reports::quoted("it's") == "'it''s'");
  CHECK(reports::quoted("a\nb`c`") == "'a b`c`'");
  if (!detail::program_on_path("gnuplot")) return;  // the picture itself, where gnuplot is installed
  const auto d = scratch("plot");
  const auto png = (d / "it's; $(x).png").string();
  auto gp = reports::begin_plot(png, "test");
  *gp << "set title " << reports::quoted("x'; system \"touch " + (d / "INJECTED").string() + "\"; '") << "\nplot x\n";
  CHECK(reports::finish_plot(png, *gp, "test"));
  CHECK(read(png).substr(1, 3) == "PNG");
  CHECK_FALSE(fs::exists(d / "INJECTED"));
  CHECK_THROWS_WITH(reports::begin_plot("/dev/full", "test"), Catch::Contains("--plot: /dev/full is not a regular"));
  fs::remove_all(d);
}

}  // namespace io_programs_and_outputs_test
