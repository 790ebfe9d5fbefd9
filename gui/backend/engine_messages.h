// What travels between the GUI thread and the engine worker thread: requests go as copies inside
// queued calls, answers come back as queued signals. Plain values only: nothing here is shared or
// locked; the stop tokens are the one cross-thread channel, and they are thread-safe by design.
#pragma once

#include <QMetaType>
#include <QString>
#include <cstdint>
#include <stop_token>
#include <vector>

#include "kiln/hardware.h"
#include "kiln/types.h"

namespace kiln::gui {

struct LoadRequest {
  QString path;
  kiln::Precision precision = kiln::Precision::Q8_0;
  kiln::BackendKind backend = kiln::BackendKind::Auto;
  kiln::AttentionPlacement attention = kiln::AttentionPlacement::Auto;
  int contextLength = 0;  // 0: the engine's default
  int threads = 0;        // 0: all cores
  std::stop_token cancel;
};

struct ChatRequest {
  quint64 id = 0;
  std::vector<kiln::ChatMessage> messages;
  kiln::GenerateOptions options;  // options.cancel is the GUI's stop button
};

// A point of the live plots, taken on the worker while a generation runs.
struct LiveSample {
  quint64 id = 0;
  double elapsedMs = 0;        // since the generation started
  double tokensPerSecond = 0;  // over the interval since the previous sample
  double residentBytes = 0;    // this process, from /proc
};

// Registers the types the worker's signals carry, for queued connections. Idempotent.
void registerEngineMetaTypes();

}  // namespace kiln::gui

Q_DECLARE_METATYPE(kiln::gui::LiveSample)
Q_DECLARE_METATYPE(kiln::ModelInfo)
Q_DECLARE_METATYPE(kiln::GenerationStats)
Q_DECLARE_METATYPE(kiln::HardwareInfo)
