// component_errors.h: LibTorch and C++ library errors raised inside a plugin's App::run or Model::forward,
// reported as et::PluginError naming the component ("model/bert: forward failed: ...").
#pragma once

#include <exception>
#include <memory>
#include <string>

#include "ethost/model.h"

namespace et::host {

// The one-line text of an exception: c10::Error without its C++ backtrace, else what().
std::string exception_text(const std::exception& e);

// Rethrows the exception being handled: et::Error as it is (already says what and where), anything else as
// PluginError "<component>: <context><text>". Call only inside a catch block.
[[noreturn]] void rethrow_attributed(const std::string& component, const std::string& context = {});

// Wraps a model created from a plugin so errors escaping its forward() name it (model/<name>). The wrapper
// forwards every call, capabilities included.
std::unique_ptr<Model> attribute_errors(std::unique_ptr<Model> model, const std::string& name);

}  // namespace et::host
