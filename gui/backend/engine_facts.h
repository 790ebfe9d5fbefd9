// The engine's plain structs, translated to what QML reads (QVariantMap / QVariantList) and
// the GUI's names for precision, backend and attention choices.
#pragma once

#include <QString>
#include <QVariantMap>
#include <optional>

#include "kiln/hardware.h"
#include "kiln/types.h"

namespace kiln::gui {

QVariantMap modelInfoToMap(const kiln::ModelInfo& info);
QVariantMap hardwareInfoToMap(const kiln::HardwareInfo& info);
QVariantMap statsToMap(const kiln::GenerationStats& stats);

// Settings use "fp16" / "int8" / "int4", "auto" / "vulkan" / "cpu", "auto" / "on" / "off".
std::optional<kiln::Precision> precisionFromSetting(const QString& name);
std::optional<kiln::BackendKind> backendFromSetting(const QString& name);
// "on" asks for the NPU; "off" keeps attention beside the rest of the model (the GPU unless the
// backend is the CPU; with a CPU fallback the engine keeps it on the CPU and says so in its notes).
std::optional<kiln::AttentionPlacement> attentionFromSetting(const QString& name, kiln::BackendKind backend);

}  // namespace kiln::gui
