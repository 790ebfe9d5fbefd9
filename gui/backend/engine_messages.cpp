#include "engine_messages.h"

namespace kiln::gui {

void registerEngineMetaTypes() {
  qRegisterMetaType<LiveSample>();
  qRegisterMetaType<kiln::ModelInfo>();
  qRegisterMetaType<kiln::GenerationStats>();
  qRegisterMetaType<kiln::HardwareInfo>();
}

}  // namespace kiln::gui
