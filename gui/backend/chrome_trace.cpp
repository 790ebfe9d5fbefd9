#include "chrome_trace.h"

#include <QJsonArray>
#include <map>

namespace kiln::gui {

namespace {

constexpr int kPid = 1, kTokensTid = 1, kOpsTid = 2;

QJsonObject threadName(int tid, const QString& name) {
  return {{"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"name", "thread_name"}, {"args", QJsonObject{{"name", name}}}};
}

QJsonObject slice(int tid, const QString& name, const QString& category, double startMicros, double micros,
                  const QJsonObject& args = {}) {
  return {{"ph", "X"}, {"pid", kPid}, {"tid", tid}, {"name", name}, {"cat", category},
          {"ts", startMicros}, {"dur", micros}, {"args", args}};
}

}  // namespace

QJsonObject chromeTrace(const kiln::GenerationStats& stats, const QString& modelName) {
  QJsonArray events;
  events.append(QJsonObject{{"ph", "M"}, {"pid", kPid}, {"name", "process_name"},
                            {"args", QJsonObject{{"name", QStringLiteral("Kiln: %1").arg(modelName)}}}});
  events.append(threadName(kTokensTid, QStringLiteral("tokens")));
  events.append(threadName(kOpsTid, QStringLiteral("ops by layer (totals)")));

  double previousMs = 0;
  for (size_t i = 0; i < stats.token_times_ms.size(); ++i) {
    const double atMs = stats.token_times_ms[i];
    const double spanMs = std::max(0.0, atMs - previousMs);
    const QString name = i == 0 ? QStringLiteral("prefill + token 1") : QStringLiteral("token %1").arg(i + 1);
    events.append(slice(kTokensTid, name, QStringLiteral("token"), previousMs * 1000, spanMs * 1000));
    if (i > 0 && spanMs > 0)
      events.append(QJsonObject{{"ph", "C"}, {"pid", kPid}, {"name", "tokens/s"}, {"ts", atMs * 1000},
                                {"args", QJsonObject{{"tokens/s", 1000.0 / spanMs}}}});
    previousMs = atMs;
  }

  // Group by layer (-1, work outside the layers, comes first) and keep the engine's op order.
  std::map<int, std::vector<const kiln::OpTiming*>> byLayer;
  for (const auto& op : stats.profile) byLayer[op.layer].push_back(&op);
  double cursor = 0;
  for (const auto& [layer, ops] : byLayer) {
    double layerMicros = 0;
    for (const auto* op : ops) layerMicros += op->micros;
    const QString layerName = layer < 0 ? QStringLiteral("outside layers") : QStringLiteral("layer %1").arg(layer);
    events.append(slice(kOpsTid, layerName, QStringLiteral("layer"), cursor, layerMicros));
    double opStart = cursor;
    for (const auto* op : ops) {
      const QJsonObject args{{"calls", static_cast<double>(op->calls)},
                             {"device", QString::fromStdString(op->device)},
                             {"layer", layer}};
      events.append(slice(kOpsTid, QString::fromStdString(op->op), QString::fromStdString(op->device), opStart,
                          op->micros, args));
      opStart += op->micros;
    }
    cursor += layerMicros;
  }

  return {{"traceEvents", events},
          {"displayTimeUnit", "ms"},
          {"otherData", QJsonObject{{"model", modelName},
                                    {"prompt_tokens", stats.prompt_tokens},
                                    {"generated_tokens", stats.generated_tokens},
                                    {"total_ms", stats.total_ms},
                                    {"stop_reason", QString::fromStdString(kiln::to_string(stats.stop_reason))}}}};
}

}  // namespace kiln::gui
