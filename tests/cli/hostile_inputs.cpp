// Hostile input to every command of the trinity program that reads a file: each sample file (a system, a
// workload, a topology, a profile, a points CSV, a trace and its embeddings) is mutated many ways (bytes
// flipped, dropped, duplicated, truncated, emptied, values swapped for hostile ones) and handed to the
// commands that read it. Every run must end with exit 0 or 2 (the bad field named), within a time limit:
// never a signal, never exit 1 (an internal error), never a hang.
//
//   trinity-cli-hostile TRINITY SAMPLES_DIR TRACE_DIR WORK_DIR   (TRACE_DIR: requests.csv and prompts.fvecs)

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

struct outcome {
  int code = 0;  // exit code, or 128 + signal
  bool hung = false;
  std::string stderr_text;
};

// Runs argv with a time limit; stdout dropped, stderr kept.
outcome run(const std::vector<std::string>& argv, const fs::path& err_file, int seconds) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* null = std::fopen("/dev/null", "w");
    std::FILE* err = std::fopen(err_file.c_str(), "w");
    dup2(fileno(null), 1);
    dup2(fileno(err), 2);
    alarm(static_cast<unsigned>(seconds));  // a hang ends in SIGALRM, reported as such
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  outcome o;
  if (WIFSIGNALED(status)) {
    o.code = 128 + WTERMSIG(status);
    o.hung = WTERMSIG(status) == SIGALRM;
  } else {
    o.code = WEXITSTATUS(status);
  }
  o.stderr_text = read(err_file);
  return o;
}

// One mutation of text, chosen by the generator.
std::string mutate(std::string text, std::mt19937& g) {
  static const std::vector<std::string> hostile = {
      "-1", "1e999", "NaN",  "\"\"",        "null",   "[]",          "{}",      "18446744073709551616",
      "-0", "0",     "true", "\"\\u0000\"", "1e-999", "\"1e308GB\"", "[[[[[[[["};
  const auto at = [&] { return text.empty() ? std::size_t{0} : g() % text.size(); };
  switch (g() % 8) {
    case 0:
      if (!text.empty()) text[at()] = static_cast<char>(g() % 256);
      break;
    case 1:
      if (!text.empty()) text.erase(at(), 1 + g() % 16);
      break;
    case 2: {
      const auto a = at();
      text.insert(a, text.substr(a, 1 + g() % 32));
      break;
    }
    case 3:
      text.resize(at());
      break;
    case 4: {
      // A number or a string value replaced by a hostile one.
      const auto a = text.find_first_of("0123456789\"", at());
      if (a != std::string::npos) {
        const auto b = text.find_first_of(",}]\n", a + 1);
        text.replace(a, (b == std::string::npos ? text.size() : b) - a, hostile[g() % hostile.size()]);
      }
      break;
    }
    case 5:
      text.clear();
      break;
    case 6:
      text = std::string(1 + g() % 4096, static_cast<char>(g() % 256));
      break;
    default: {
      const auto a = at();
      text.insert(a, hostile[g() % hostile.size()]);
      break;
    }
  }
  return text;
}

}  // namespace

// The promise every run keeps: exit 0, or exit 2 with the field named. A broken one is counted and reported.
#define EXPECT(promise, report) \
  do {                          \
    if (!(promise)) {           \
      ++failures;               \
      (report)();               \
    }                           \
  } while (false)

// The command line of a target: "@" is the file under test, the trace files are the shipped excerpt's, PROBE the
// recorded H100 probe; every other argument as written.
std::vector<std::string> command(const std::string& trinity, const std::vector<std::string>& args, const fs::path& file,
                                 const fs::path& samples, const fs::path& traces) {
  std::vector<std::string> out{trinity};
  for (const auto& a : args) {
    if (a == "@")
      out.push_back(file.string());
    else if (a == "prompts.fvecs" || a == "requests.csv")
      out.push_back((traces / a).string());
    else if (a == "PROBE")
      out.push_back((samples / "../../../bench/results/transformer-probe-h100.json").string());
    else
      out.push_back(a);
  }
  return out;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: trinity-cli-hostile TRINITY SAMPLES_DIR TRACE_DIR WORK_DIR\n";
    return 2;
  }
  const std::string trinity = argv[1];
  const fs::path samples = argv[2], traces = argv[3], work = argv[4];
  fs::create_directories(work);
  struct target {
    std::string sample;
    std::vector<std::string> args;  // "@" is the mutated file
  };
  const std::vector<target> targets = {
      {"system.json", {"plan", "--system", "@", "--workload", "llm-7b-train"}},
      {"system.json", {"simulate", "--system", "@", "--workload", "llm-7b-train"}},
      {"workload.json", {"plan", "--system", "h100-ib-cluster", "--workload", "@"}},
      {"diffusion.json", {"plan", "--system", "gb200-nvl72-cxl", "--workload", "@"}},
      {"edge.json", {"plan", "--system", "edge-5g-cloud", "--workload", "@"}},
      {"topology.json", {"fabric", "--topology", "@"}},
      {"profile.json", {"choose", "--profile", "@", "--bandwidth", "10Gbps"}},
      {"profile.json", {"plan", "--system", "h100-ib-cluster", "--workload", "llm-7b-train", "--profile", "@"}},
      {"points.csv",
       {"model", "cache", "--steps", "50", "--step-flops", "1e9", "--reuse-depth", "20", "--entry-size", "2GB",
        "--capacity", "10GB", "--points", "@"}},
      {"requests.csv",
       {"cache", "replay", "--trace", "@", "--embeddings", "prompts.fvecs", "--capacity", "1GB", "--latent-size",
        "0.016GB"}},
      {"prompts.fvecs",
       {"cache", "replay", "--trace", "requests.csv", "--embeddings", "@", "--capacity", "1GB", "--latent-size",
        "0.016GB"}},
  };
  std::mt19937 g(2026);
  int runs = 0, failures = 0, refused = 0;
  for (const auto& t : targets) {
    const bool trace_file = t.sample == "requests.csv" || t.sample == "prompts.fvecs";
    const std::string original = read((trace_file ? traces : samples) / t.sample);
    for (int k = 0; k < 40; ++k) {
      const fs::path file = work / ("mutated-" + std::to_string(runs) + fs::path(t.sample).extension().string());
      write(file, mutate(original, g));
      const auto argv_ = command(trinity, t.args, file, samples, traces);
      const auto o = run(argv_, work / "stderr.txt", 30);
      ++runs;
      refused += o.code == 2;
      const bool named = o.code != 2 || o.stderr_text.rfind("trinity: ", 0) == 0;
      const bool kept = (o.code == 0 || o.code == 2) && named;
      EXPECT(kept, [&] {
        std::cerr << "FAIL (" << (o.hung ? "hung" : "exit " + std::to_string(o.code)) << "): trinity";
        for (std::size_t i = 1; i < argv_.size(); ++i) std::cerr << ' ' << argv_[i];
        std::cerr << "\n  kept as " << file << "\n  " << o.stderr_text.substr(0, 400) << '\n';
      });
      if (kept) fs::remove(file);  // a broken one stays, to reproduce
    }
  }
  // Every file argument handed something that is not a file: a directory, a FIFO (opening one blocks until a
  // writer comes), an endless device and a path that vanished. Each must exit 2 naming the path, at once.
  const fs::path dir = work / "a-directory", fifo = work / "a-fifo", gone = work / "vanished.json";
  fs::create_directories(dir);
  fs::remove(fifo);
  if (mkfifo(fifo.c_str(), 0600) != 0) {
    std::cerr << "cannot make a FIFO in " << work << '\n';
    return 1;
  }
  std::vector<target> file_arguments = targets;
  file_arguments.push_back({"", {"verify", "--system", "@", "--workload", "llm-7b-train"}});
  file_arguments.push_back({"", {"validate", "--runs", "@", "--probe", "PROBE"}});
  file_arguments.push_back(
      {"", {"cache", "replay", "--format", "mooncake", "--trace", "@", "--capacity-blocks", "300"}});
  int special = 0;
  for (const auto& t : file_arguments)
    for (const fs::path& file : {dir, fifo, fs::path("/dev/zero"), gone}) {
      const auto argv_ = command(trinity, t.args, file, samples, traces);
      const auto o = run(argv_, work / "stderr.txt", 10);
      ++special;
      const bool kept = o.code == 2 && o.stderr_text.rfind("trinity: ", 0) == 0 &&
                        o.stderr_text.find(file.string()) != std::string::npos;
      EXPECT(kept, [&] {
        std::cerr << "FAIL (" << (o.hung ? "hung" : "exit " + std::to_string(o.code)) << "): trinity";
        for (std::size_t i = 1; i < argv_.size(); ++i) std::cerr << ' ' << argv_[i];
        std::cerr << "\n  " << o.stderr_text.substr(0, 400) << '\n';
      });
    }
  fs::remove(fifo);
  std::cout << runs << " runs on mutated files, " << refused << " refused with exit 2 and the field named; " << special
            << " runs on a directory, a FIFO, /dev/zero and a vanished path; " << failures << " failed\n";
  return failures ? 1 : 0;
}
