// python_worker.cpp: fork/exec of the Python baseline with a pipe each way, line-based requests.
#include "python_worker.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ethost/error.h"

namespace et::bench {

PythonWorker::PythonWorker(const std::string& python, const std::string& script,
                           const std::string& job_path) {
  // A worker that dies must surface as an error from request(), not as SIGPIPE killing the bench.
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];  // in: parent -> child stdin; out: child stdout -> parent
  if (pipe(in) != 0) throw et::InternalError(std::string("pipe: ") + std::strerror(errno));
  if (pipe(out) != 0) {
    close(in[0]), close(in[1]);
    throw et::InternalError(std::string("pipe: ") + std::strerror(errno));
  }
  pid_ = fork();
  if (pid_ < 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    throw et::InternalError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execlp(python.c_str(), python.c_str(), script.c_str(), "--serve", job_path.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_ = in[1];
  from_ = out[0];
  std::string hello;
  try {
    hello = request("");
  } catch (const et::Error&) {
    hello = "(exited)";
  }
  if (hello != "ready") {
    shutdown();
    throw et::InternalError("the Python baseline worker did not start (" + python + " " + script +
                            " --serve " + job_path + "): '" + hello + "'");
  }
}

PythonWorker::~PythonWorker() { shutdown(); }

void PythonWorker::shutdown() {
  if (to_ >= 0) {
    const char quit[] = "quit\n";
    (void)!write(to_, quit, sizeof quit - 1);
    close(to_);
  }
  if (from_ >= 0) close(from_);
  if (pid_ > 0) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  to_ = from_ = -1;
  pid_ = -1;
}

// Sends a line (none when empty) and reads one line back.
std::string PythonWorker::request(const std::string& line) {
  if (!line.empty()) {
    const std::string msg = line + "\n";
    size_t off = 0;
    while (off < msg.size()) {
      const ssize_t n = write(to_, msg.data() + off, msg.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw et::InternalError("the Python baseline worker exited (writing '" + line + "')");
      off += static_cast<size_t>(n);
    }
  }
  for (;;) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string reply = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return reply;
    }
    char chunk[256];
    const ssize_t n = read(from_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw et::InternalError("the Python baseline worker exited (after '" + line +
                              "'); see its stderr above");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void PythonWorker::setup(const std::string& precision, const std::string& kind) {
  const std::string r = request("setup " + precision + " " + kind);
  if (r != "ok")
    throw et::InternalError("Python baseline worker: setup " + precision + " " + kind + ": " + r);
}

double PythonWorker::step() {
  const std::string r = request("step");
  try {
    return std::stod(r);
  } catch (const std::exception&) {
    throw et::InternalError("Python baseline worker: step answered '" + r + "'");
  }
}

}  // namespace et::bench
