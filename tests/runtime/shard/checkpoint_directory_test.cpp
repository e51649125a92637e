// A checkpoint directory is whole or absent and says what it holds: the manifest's text round trip and its
// hostile reading, a save that replaces a checkpoint whole (another world size's pieces with it) and nothing
// else, a save cut short that leaves the previous checkpoint, and a load that refuses a piece missing, extra,
// truncated, flipped or from another run, naming it.
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>
#include <trinity/shard.hpp>
#include <trinity/shard/checkpoint_directory.hpp>
#include <trinity/shard/checkpoint_manifest.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace shard_checkpoint_directory_test {

using namespace trinity;
namespace fs = std::filesystem;

namespace {

const std::vector<std::size_t> sizes{300, 7, 1001};

// Every rank's data_parallel at ZeRO-1, its parameters all `value`, marked as having taken `steps`, saved into
// `dir` (or, where `load`, loaded from it: rank 0's layer 2 values then returned).
std::vector<float> run(int ranks, float value, long steps, const fs::path& dir, bool load = false) {
  comm::thread_world world(ranks);
  std::vector<float> first;
  const std::size_t total = sizes[0] + sizes[1] + sizes[2];
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    shard::data_parallel<shard::zero<1>, comm::thread_communicator> dp(c, ledger, sizes,
                                                                       std::vector<float>(total, value), shard::adam{});
    if (load) {
      const long taken = shard::load_checkpoint(dir, dp, c);
      dp.acquire(2);
      if (c.rank() == 0) {
        const auto p = dp.parameters(2);
        first.assign(p.begin(), p.end());
        first.push_back(static_cast<float>(taken));
      }
      dp.release(2);
    } else {
      dp.set_steps_taken(steps);
      shard::save_checkpoint(dir, dp, c);
    }
  });
  return first;
}

fs::path fresh(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("trinity-ckpt-dir-test-" + name);
  fs::remove_all(dir);
  fs::remove_all(shard::checkpoint_staging(dir));
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string refusal_of(const auto& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no refusal)";
}

shard::checkpoint_manifest sample() {
  return {4, 12, 13, "pp=2,tp=1", {{"a/rank-0-of-2.ckpt", 10, 0xfeedu}, {"b/rank-1-of-2.ckpt", 0, 1}}};
}

}  // namespace

TEST_CASE("a manifest's text reads back as the manifest written", "[shard][checkpoint]") {
  const auto m = sample();
  const auto text = shard::to_text(m);
  CHECK(
      text.starts_with("trinity-checkpoint 1\nworld_size 4\nstep 12\niteration 13\nlayout pp=2,tp=1\n"
                       "piece 10 000000000000feed a/rank-0-of-2.ckpt\n"));
  const auto back = shard::parse_checkpoint_manifest(text, "m");
  CHECK(back.world_size == 4);
  CHECK(back.step == 12);
  CHECK(back.iteration == 13);
  CHECK(back.layout == "pp=2,tp=1");
  CHECK(back.pieces == m.pieces);
}

TEST_CASE("a manifest is read as hostile: each damage refused by its line", "[shard][checkpoint]") {
  const auto refused = [](shard::checkpoint_manifest m) {
    return refusal_of([&] { shard::parse_checkpoint_manifest(shard::to_text(m), "m"); });
  };
  // Well checksummed, wrong in what they say.
  auto m = sample();
  m.world_size = 0;
  CHECK_THAT(refused(m), Catch::Contains("m:2: world_size is 0"));
  for (const std::string path : {"../x", "/etc/passwd", "a//b", "a/./b", "a b", "checkpoint.manifest", "", "a/"}) {
    m = sample();
    m.pieces[0].path = path;
    INFO(path);
    CHECK_THAT(refused(m), Catch::Contains("not a plain relative path") || Catch::Contains("expected `piece"));
  }
  m = sample();
  std::swap(m.pieces[0], m.pieces[1]);
  CHECK_THAT(refused(m), Catch::Contains("m:7: the pieces are not in strict path order"));
  m.pieces[0] = m.pieces[1];
  CHECK_THAT(refused(m), Catch::Contains("strict path order"));
  m = sample();
  m.pieces.clear();
  CHECK_THAT(refused(m), Catch::Contains("names no piece"));
  // Text damaged after it was checksummed, or never a manifest.
  const std::string good = shard::to_text(sample());
  auto edited = good;
  edited.replace(edited.find("step 12"), 7, "step 99");
  const auto parse = [](const std::string& t) { return refusal_of([&] { shard::parse_checkpoint_manifest(t, "m"); }); };
  CHECK_THAT(parse(edited), Catch::Contains("m:8: the checksum does not match the lines above it") &&
                                Catch::Contains("checkpoint.manifest: ") && Catch::Contains("Fix: load another"));
  CHECK_THAT(parse(good.substr(0, good.size() - 1)), Catch::Contains("does not end with its checksum line"));
  CHECK_THAT(parse(good + "x\n"), Catch::Contains("the last line is not `checksum"));
  CHECK_THAT(parse(std::string("\n")), Catch::Contains("the last line is not `checksum"));
  CHECK_THAT(parse(""), Catch::Contains("does not end with its checksum line"));
  auto nul = good;
  nul[3] = '\0';
  CHECK_THAT(parse(nul), Catch::Contains("checksum does not match"));
  // Numbers as written by a person: a sign, a leading zero, a fraction or past the range.
  for (const std::string bad : {"step +12", "step 012", "step 1.5", "step 99999999999999999999", "step -1"}) {
    std::string body = "trinity-checkpoint 1\nworld_size 4\n" + bad +
                       "\niteration 1\nlayout x\npiece 1 "
                       "0000000000000001 a\n";
    body += "checksum " + shard::detail::hex16(shard::detail::fnv1a_64(body)) + "\n";
    INFO(bad);
    CHECK_THAT(parse(body), Catch::Contains("m:3: step is not a whole number"));
  }
}

TEST_CASE("a save replaces a checkpoint whole: another world size's pieces go with it", "[shard][checkpoint]") {
  const auto dir = fresh("stale");
  run(4, 1.0f, 5, dir);
  CHECK(fs::exists(dir / "rank-3-of-4.ckpt"));
  run(2, 2.0f, 7, dir);
  CHECK_FALSE(fs::exists(dir / "rank-3-of-4.ckpt"));
  CHECK_FALSE(fs::exists(dir / "rank-0-of-4.ckpt"));
  CHECK_FALSE(fs::exists(shard::checkpoint_staging(dir)));
  const auto m = shard::verify_checkpoint(dir);
  CHECK(m.world_size == 2);
  CHECK(m.step == 7);
  REQUIRE(m.pieces.size() == 2);
  CHECK(m.pieces[1].path == "rank-1-of-2.ckpt");
  CHECK(m.pieces[1].bytes == fs::file_size(dir / "rank-1-of-2.ckpt"));
  // A run of 3 resumes from the second save, at its values and steps.
  const auto loaded = run(3, 0.0f, 0, dir, true);
  REQUIRE(loaded.size() == sizes[2] + 1);
  CHECK(loaded.front() == 2.0f);
  CHECK(loaded.back() == 7.0f);
  fs::remove_all(dir);
}

TEST_CASE("a load refuses a piece truncated, flipped, missing or beside an extra file, naming it",
          "[shard][checkpoint]") {
  const auto dir = fresh("damage");
  run(3, 1.5f, 4, dir);
  const auto piece = dir / "rank-1-of-3.ckpt";
  const std::string bytes = read(piece);
  const auto load = [&] { return refusal_of([&] { run(2, 0.0f, 0, dir, true); }); };
  std::filesystem::resize_file(piece, bytes.size() - 3);
  CHECK_THAT(load(),
             Catch::Contains("checkpoint.pieces: " + piece.string() + " holds " + std::to_string(bytes.size() - 3) +
                             " bytes where its manifest says " + std::to_string(bytes.size())));
  auto flipped = bytes;
  flipped[100] = static_cast<char>(flipped[100] ^ 0x10);
  std::ofstream(piece, std::ios::binary | std::ios::trunc) << flipped;
  CHECK_THAT(load(), Catch::Contains(piece.string() + " fails its manifest's checksum"));
  fs::remove(piece);
  CHECK_THAT(load(), Catch::Contains(piece.string() + " is missing"));
  std::ofstream(piece, std::ios::binary) << bytes;
  std::ofstream(dir / "rank-0-of-4.ckpt") << "stale";
  CHECK_THAT(load(), Catch::Contains("rank-0-of-4.ckpt is not among the pieces its manifest names") &&
                         Catch::Contains("Fix: remove it"));
  fs::remove(dir / "rank-0-of-4.ckpt");
  fs::create_directory(dir / "empty");
  CHECK_THAT(load(), Catch::Contains("empty/ is neither a piece nor a folder of pieces"));
  fs::remove(dir / "empty");
  fs::remove(dir / "checkpoint.manifest");
  CHECK_THAT(load(), Catch::Contains("holds no checkpoint.manifest"));
  fs::remove_all(dir);
}

TEST_CASE("a load refuses pieces whose steps are not their manifest's", "[shard][checkpoint]") {
  const auto dir = fresh("steps");
  run(2, 1.0f, 4, dir);
  auto m = shard::verify_checkpoint(dir);
  m.step = 5;
  std::ofstream(dir / "checkpoint.manifest", std::ios::trunc) << shard::to_text(m);
  CHECK_THAT(refusal_of([&] { run(2, 0.0f, 0, dir, true); }),
             Catch::Contains("took 4 steps; its manifest says 5: they come from different runs"));
  fs::remove_all(dir);
}

TEST_CASE("a save cut short leaves the previous checkpoint, and the next save clears its staging",
          "[shard][checkpoint]") {
  const auto dir = fresh("cut");
  run(2, 1.0f, 3, dir);
  // A save killed after its staging directory and one piece were written: nothing reached `dir`.
  shard::begin_checkpoint(dir);
  const auto staging = shard::checkpoint_staging(dir);
  std::ofstream(staging / "rank-0-of-2.ckpt") << "half a piece";
  auto loaded = run(2, 0.0f, 0, dir, true);
  CHECK(loaded.front() == 1.0f);
  CHECK(loaded.back() == 3.0f);
  run(2, 3.0f, 6, dir);
  CHECK_FALSE(fs::exists(staging));
  loaded = run(2, 0.0f, 0, dir, true);
  CHECK(loaded.front() == 3.0f);
  CHECK(loaded.back() == 6.0f);
  fs::remove_all(dir);
}

TEST_CASE("a save refuses a directory that is not a checkpoint and leaves it as it was", "[shard][checkpoint]") {
  const auto dir = fresh("user");
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "keep me";
  CHECK_THAT(refusal_of([&] { run(2, 1.0f, 1, dir); }),
             Catch::Contains("holds files but no checkpoint.manifest") && Catch::Contains("Fix: save into a new"));
  CHECK(read(dir / "notes.txt") == "keep me");
  CHECK_FALSE(fs::exists(dir / "rank-0-of-2.ckpt"));
  // Something of the user's where the staging directory goes is refused too, and kept.
  const auto other = fresh("user-staging");
  std::ofstream(shard::checkpoint_staging(other)) << "mine";
  CHECK_THAT(refusal_of([&] { run(2, 1.0f, 1, other); }), Catch::Contains("is in the way of the save's staging"));
  CHECK(read(shard::checkpoint_staging(other)) == "mine");
  fs::remove_all(dir);
  fs::remove_all(shard::checkpoint_staging(other));
}

}  // namespace shard_checkpoint_directory_test
