// app.h: the App interface — an AppZoo task that runs in one of the host's modes.
#pragma once

#include <string>

#include "ethost/component.h"
#include "ethost/export.h"

namespace et {

enum class Mode { train, evaluate, predict, serve };

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::train:
      return "train";
    case Mode::evaluate:
      return "evaluate";
    case Mode::predict:
      return "predict";
    case Mode::serve:
      return "serve";
  }
  return "?";
}

// An app is created per run with the resolved configuration (the whole document) and the context. Optional
// capabilities (et::Predictor, ...) are offered through query_interface.
class ET_API App : public Component {
 public:
  virtual ~App();
  // Runs the mode to completion. Throws et::Error subclasses for user-caused failures.
  virtual void run(Mode mode) = 0;
};

}  // namespace et
