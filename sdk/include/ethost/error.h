// error.h: the error hierarchy shared by host and plugins, with the process exit code each maps to.
#pragma once

#include <stdexcept>
#include <string>

#include "ethost/export.h"

namespace et {

// Process exit codes (documented in docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,          // bad command line or configuration
  kExitPlugin = 3,         // a plugin could not be found, loaded or initialised
  kExitData = 4,           // bad input data (missing file, strict-mode bad row, empty set)
  kExitDistributed = 5,    // a rank or node never arrived, was lost, or another node failed (since ABI 2.1)
  kExitInterrupted = 130,  // SIGINT
  kExitTerminated = 143,   // SIGTERM
};

// Base of every error ethost throws on purpose. what() is the full one-line message:
// "<where>: <what> (hint: <hint>)" with empty parts left out.
class ET_API Error : public std::runtime_error {
 public:
  Error(std::string what, std::string where = {}, std::string hint = {});
  ~Error() override;
  virtual int exit_code() const noexcept { return kExitInternal; }
  const std::string& bare_what() const noexcept { return what_; }
  const std::string& where() const noexcept { return where_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string what_, where_, hint_;
};

class ET_API ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
  int exit_code() const noexcept override { return kExitUsage; }
};

class ET_API UsageError : public Error {
 public:
  using Error::Error;
  ~UsageError() override;
  int exit_code() const noexcept override { return kExitUsage; }
};

class ET_API PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
  int exit_code() const noexcept override { return kExitPlugin; }
};

class ET_API DataError : public Error {
 public:
  using Error::Error;
  ~DataError() override;
  int exit_code() const noexcept override { return kExitData; }
};

// A distributed job cannot go on: a rank or node did not arrive within the rendezvous timeout, the rendezvous
// store was lost, or another node reported a failure.
class ET_API DistError : public Error {
 public:
  using Error::Error;
  ~DistError() override;
  int exit_code() const noexcept override { return kExitDistributed; }
};

class ET_API InternalError : public Error {
 public:
  using Error::Error;
  ~InternalError() override;
};

// Thrown when a run stops on SIGINT/SIGTERM after saving its state.
class ET_API Interrupted : public Error {
 public:
  explicit Interrupted(int signal_number);
  ~Interrupted() override;
  int exit_code() const noexcept override { return code_; }

 private:
  int code_;
};

// Maps any exception to the process exit code (et::Error's code, else kExitInternal).
ET_API int exit_code_of(const std::exception& e) noexcept;

}  // namespace et

// Always-on invariant check: throws et::InternalError naming the file and line.
#define ET_CHECK(cond, msg)                                                              \
  do {                                                                                   \
    if (!(cond))                                                                         \
      throw ::et::InternalError(std::string("check failed: ") + #cond + ": " + (msg),    \
                                std::string(__FILE__) + ":" + std::to_string(__LINE__)); \
  } while (0)
