// A generation's timings as a Chrome trace (the JSON "Trace Event Format" that Perfetto and
// chrome://tracing open).
//
// Thread 1 ("tokens") has one slice per generated token at its real time, the first one covering
// the prompt's prefill. The engine's profile holds totals per op and layer, not individual calls,
// so thread 2 ("ops by layer") lays those totals end to end: one slice per layer, its ops nested
// inside, lengths true, positions only an arrangement.
#pragma once

#include <QJsonObject>

#include "kiln/types.h"

namespace kiln::gui {

QJsonObject chromeTrace(const kiln::GenerationStats& stats, const QString& modelName);

}  // namespace kiln::gui
