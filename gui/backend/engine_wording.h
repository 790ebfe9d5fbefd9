// The engine's English one-liners (why the NPU or a GPU is not used, load notes, the device a
// model runs on) as the app says them: translated, and without the command-line flags the CLI
// names (a desktop app has none). Text the table does not know stays as the engine wrote it,
// minus any flag.
#pragma once

#include <QCoreApplication>
#include <QString>
#include <string>

namespace kiln::gui {

class EngineWording {
  Q_DECLARE_TR_FUNCTIONS(EngineWording)

 public:
  // A reason or note: "no /dev/accel device: ...", "Vulkan not used: ...; running on the CPU".
  static QString text(const std::string& engineText);
  // ModelInfo::backend: "cpu (2 threads)" -> "CPU, 2 threads"; "vulkan (NAME)" -> "GPU (Vulkan): NAME".
  static QString device(const std::string& backend);
  // Whether the backend is a CPU implementation of Vulkan (see kiln::kSoftwareVulkan).
  static bool softwareVulkan(const std::string& backend);
  // GpuDevice::refusal, given the device's type ("cpu" for lavapipe and its kind).
  static QString refusal(const std::string& type, const std::string& refusal);
};

}  // namespace kiln::gui
