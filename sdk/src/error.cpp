// error.cpp: et::Error and its subclasses (out-of-line so their typeinfo lives in the SDK library).
#include "ethost/error.h"

#include <csignal>

namespace et {
namespace {
std::string compose(const std::string& what, const std::string& where, const std::string& hint) {
  std::string s;
  if (!where.empty()) s += where + ": ";
  s += what;
  if (!hint.empty()) s += " (hint: " + hint + ")";
  return s;
}
}  // namespace

Error::Error(std::string what, std::string where, std::string hint)
    : std::runtime_error(compose(what, where, hint)),
      what_(std::move(what)),
      where_(std::move(where)),
      hint_(std::move(hint)) {}
Error::~Error() = default;
ConfigError::~ConfigError() = default;
UsageError::~UsageError() = default;
PluginError::~PluginError() = default;
DataError::~DataError() = default;
DistError::~DistError() = default;
InternalError::~InternalError() = default;

Interrupted::Interrupted(int signal_number)
    : Error(signal_number == SIGTERM ? "terminated (SIGTERM)" : "interrupted (SIGINT)"),
      code_(signal_number == SIGTERM ? kExitTerminated : kExitInterrupted) {}
Interrupted::~Interrupted() = default;

int exit_code_of(const std::exception& e) noexcept {
  if (auto* err = dynamic_cast<const Error*>(&e)) return err->exit_code();
  return kExitInternal;
}

}  // namespace et
