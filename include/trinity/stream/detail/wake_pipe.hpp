#pragma once
//! \file
//! wake_pipe: a pipe a thread polls beside its ZeroMQ socket, so another thread
//! can wake it (zmq_poll takes plain file descriptors too). signal() makes it
//! readable until clear(); both are non-blocking, and a full pipe is as good as
//! a written one.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <trinity/stream/stream_error.hpp>

namespace trinity::stream::detail {

class wake_pipe {
 public:
  wake_pipe() {
    if (::pipe2(fd_, O_NONBLOCK | O_CLOEXEC) != 0)
      throw stream_error(std::string("cannot make a wake-up pipe: ") + std::strerror(errno));
  }
  wake_pipe(const wake_pipe&) = delete;
  wake_pipe& operator=(const wake_pipe&) = delete;
  ~wake_pipe() {
    ::close(fd_[0]);
    ::close(fd_[1]);
  }

  [[nodiscard]] int read_fd() const noexcept { return fd_[0]; }

  void signal() noexcept {
    const char c = 1;
    while (::write(fd_[1], &c, 1) < 0 && errno == EINTR) {
    }
  }

  void clear() noexcept {
    char buf[64];
    for (;;) {
      const auto n = ::read(fd_[0], buf, sizeof buf);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      return;
    }
  }

 private:
  int fd_[2] = {-1, -1};
};

}  // namespace trinity::stream::detail
