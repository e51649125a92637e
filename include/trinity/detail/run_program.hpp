#pragma once
//! \file
//! Starting another program without a shell: posix_spawnp with an argument vector, so no byte of an argument (a
//! path holding ', ; or $(...)) is ever read as a command. Its input is handed over as bytes, its output and
//! errors are captured (bounded), and its end is reported as an exit code or the signal that ended it, never as
//! a raw wait status.
//!
//!   const auto r = trinity::detail::run_program({"gnuplot"}, script);
//!   if (!r.end.succeeded()) std::cerr << "gnuplot: " << r.end.describe() << '\n';

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;  // POSIX: the process's environment, handed on to the programs it starts

namespace trinity::detail {

//! How a started program ended: its exit code, or the signal that ended it.
struct program_end {
  int code = 0;    //!< the exit code, where signal is 0
  int signal = 0;  //!< the signal that ended it, or 0
  [[nodiscard]] bool succeeded() const noexcept { return signal == 0 && code == 0; }
  //! "exit code 1", or "signal 9 (Killed)".
  [[nodiscard]] std::string describe() const {
    if (signal == 0) return "exit code " + std::to_string(code);
    const char* name = ::strsignal(signal);
    return "signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : std::string());
  }
};

//! What a program run gave back.
struct program_run {
  program_end end;
  std::string out;  //!< its standard output (and its standard error, where merged)
  std::string err;  //!< its standard error, where not merged
};

//! Where a program's standard error goes: apart (program_run::err), or into its output in order, as `2>&1`.
enum class error_stream { apart, merged };

//! Its output past this many bytes ends the run (killed) and is refused: nothing a flag names grows unbounded.
inline constexpr std::size_t max_program_output = std::size_t{64} << 20;

namespace detail_run {
// A descriptor closed when it leaves scope.
struct owned_fd {
  int fd = -1;
  owned_fd() = default;
  explicit owned_fd(int f) : fd(f) {}
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  ~owned_fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

[[noreturn]] inline void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

// A pipe whose two ends close on exec; the child's end is dup2'd onto its standard stream, which does not.
inline void make_pipe(owned_fd& read_end, owned_fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe2");
  read_end.fd = fds[0];
  write_end.fd = fds[1];
}

// Reads what is there on `fd` into `into`; false at its end.
inline bool drain(int fd, std::string& into) {
  std::array<char, 1 << 16> buf;
  const ssize_t n = ::read(fd, buf.data(), buf.size());
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  into.append(buf.data(), static_cast<std::size_t>(n));
  return n > 0;
}
// The parent's ends of a started program's standard streams: its input (a socket, so that writing to a program
// that left unread costs EPIPE, not SIGPIPE), its output and, where apart, its errors.
struct child_ends {
  owned_fd in, out, err;
};

// Starts argv[0] (searched on PATH) with its standard streams on fresh pipes, whose parent ends go to `ends`.
inline pid_t spawn(const std::vector<std::string>& argv, bool merge, child_ends& ends) {
  owned_fd in_child, out_write, err_write;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) fail("socketpair");
  ends.in.fd = fds[0];
  in_child.fd = fds[1];
  make_pipe(ends.out, out_write);
  if (!merge) make_pipe(ends.err, err_write);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in_child.fd, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out_write.fd, 1);
  ::posix_spawn_file_actions_adddup2(&actions, merge ? out_write.fd : err_write.fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int started = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (started != 0) throw std::system_error(started, std::generic_category(), "cannot start " + argv[0]);
  ::fcntl(ends.in.fd, F_SETFL, ::fcntl(ends.in.fd, F_GETFL) | O_NONBLOCK);
  return pid;
}

// Writes `input` to the program and reads its output and errors into `r` until both end: false, and stopped,
// where they pass max_program_output.
inline bool exchange(child_ends& ends, std::string_view input, program_run& r) {
  std::size_t written = 0;
  while (ends.out.fd >= 0 || ends.err.fd >= 0) {
    std::array<pollfd, 3> fds{{{ends.out.fd, POLLIN, 0}, {ends.err.fd, POLLIN, 0}, {ends.in.fd, POLLOUT, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      fail("poll");
    }
    if (fds[0].revents && !drain(ends.out.fd, r.out)) ends.out.reset();
    if (fds[1].revents && !drain(ends.err.fd, r.err)) ends.err.reset();
    if (fds[2].revents) {
      const ssize_t n = ::send(ends.in.fd, input.data() + written, input.size() - written, MSG_NOSIGNAL);
      if (n > 0) written += static_cast<std::size_t>(n);
      // It stopped reading (EPIPE) or read it all: either way it has had what it will take.
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) ends.in.reset();
    }
    if (r.out.size() + r.err.size() > max_program_output) return false;
  }
  return true;
}
}  // namespace detail_run

//! Runs argv[0] (looked up on PATH where it holds no '/') with `argv` as its arguments, no shell between, `input`
//! written to its standard input. Throws std::system_error naming the program when it cannot be started,
//! std::length_error when it writes more than max_program_output.
inline program_run run_program(const std::vector<std::string>& argv, std::string_view input = {},
                               error_stream errors = error_stream::apart) {
  if (argv.empty()) throw std::system_error(EINVAL, std::generic_category(), "run_program: no program named");
  detail_run::child_ends ends;
  const pid_t pid = detail_run::spawn(argv, errors == error_stream::merged, ends);
  if (input.empty()) ends.in.reset();
  program_run r;
  const bool kept_within = detail_run::exchange(ends, input, r);
  if (!kept_within) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) detail_run::fail("waitpid");
  if (!kept_within)
    throw std::length_error(argv[0] + " wrote more than " + std::to_string(max_program_output) + " bytes; stopped");
  if (WIFSIGNALED(status))
    r.end.signal = WTERMSIG(status);
  else
    r.end.code = WEXITSTATUS(status);
  return r;
}

//! Whether `name` is a program on PATH (or, holding a '/', an executable file).
inline bool program_on_path(std::string_view name) {
  if (name.empty()) return false;
  if (name.find('/') != std::string_view::npos) return ::access(std::string(name).c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (::access(((dir.empty() ? "." : dir) + "/" + std::string(name)).c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

//! One argument as a POSIX shell reader would type it: bare where it is only safe characters, in single quotes
//! otherwise, and as $'...' with its control bytes escaped where it holds any, so that what is printed can be
//! pasted back and no byte of it reaches the terminal raw.
inline std::string shell_quoted(std::string_view arg) {
  constexpr std::string_view safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
  if (!arg.empty() && arg.find_first_not_of(safe) == std::string_view::npos) return std::string(arg);
  bool control = false;
  for (const char ch : arg) control |= static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
  std::string out = control ? "$'" : "'";
  for (const char ch : arg) {
    const auto c = static_cast<unsigned char>(ch);
    if (!control) {
      out += c == '\'' ? std::string("'\\''") : std::string(1, static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
      constexpr char hex[] = "0123456789abcdef";
      out += c == '\''   ? std::string("\\'")
             : c == '\\' ? std::string("\\\\")
                         : std::string{'\\', 'x', hex[c >> 4], hex[c & 15]};
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

//! A command line as a reader would type it: each argument shell_quoted, spaces between.
inline std::string shell_quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quoted(a);
  return out;
}

}  // namespace trinity::detail
