// Talks to OpenAI-compatible endpoints (core/remote) off the GUI thread: lists an endpoint's models
// and streams chat answers. It emits what EngineWorker emits for a chat (textArrived, liveSample,
// finished, failed), so a remote model answers through the same path as a local one.
#pragma once

#include <QObject>
#include <QStringList>
#include <stop_token>

#include "engine_messages.h"

namespace kiln::gui {

// Where a remote chat goes.
struct RemoteTarget {
  QString url;     // the endpoint as the user typed it
  QString apiKey;  // "" = none
  QString model;   // one of the endpoint's /v1/models ids
};

class RemoteWorker : public QObject {
  Q_OBJECT

 public:
  explicit RemoteWorker(QObject* parent = nullptr);

  // Whether this build can talk to endpoints (it needs libcurl).
  static bool available();
  // The API root requests go to ("http://host:8080/v1"), or "" when `url` cannot be one.
  static QString apiRoot(const QString& url);

 public slots:
  void chat(const kiln::gui::ChatRequest& request, const kiln::gui::RemoteTarget& target);
  void listModels(quint64 requestId, const QString& url, const QString& apiKey, std::stop_token cancel = {});

 signals:
  void textArrived(quint64 id, const QString& text);
  void liveSample(const kiln::gui::LiveSample& sample);
  void finished(quint64 id, const kiln::GenerationStats& stats);
  void failed(quint64 id, const QString& message);
  void modelsListed(quint64 requestId, const QStringList& models);
  void listFailed(quint64 requestId, const QString& message);
};

}  // namespace kiln::gui
