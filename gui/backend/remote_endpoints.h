// The Models page's remote endpoints: OpenAI-compatible servers the user added (a base URL and an
// optional API key, kept with QSettings under "remote/endpoints"), each with the models its
// /v1/models lists. Listing runs on a worker thread; nothing here blocks the window.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QThread>
#include <QVariantList>
#include <QVariantMap>
#include <stop_token>
#include <vector>

namespace kiln::gui {

class RemoteWorker;

class RemoteEndpoints : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(bool available READ available CONSTANT)
  // One map per endpoint: url, root (where requests go), hasKey, models (list of ids),
  // listing (a request is out), error ("" or why the list could not be read).
  Q_PROPERTY(QVariantList endpoints READ endpoints NOTIFY endpointsChanged)
  // The remote model chatted with last ({url, model}; empty once a local model is loaded): the app
  // starts with it again, as it does with the last local model.
  Q_PROPERTY(QVariantMap lastUsed READ lastUsed NOTIFY lastUsedChanged)

 public:
  explicit RemoteEndpoints(QObject* parent = nullptr);
  ~RemoteEndpoints() override;

  static bool available();
  QVariantList endpoints() const;
  QVariantMap lastUsed() const;

  // Adds (or, for a URL already there, updates the key of) an endpoint and lists its models.
  // Returns "" or why the URL cannot be one (the endpoint is not added then).
  Q_INVOKABLE QString add(const QString& url, const QString& apiKey);
  Q_INVOKABLE void remove(const QString& url);
  // Lists the models again (all endpoints for an empty url).
  Q_INVOKABLE void refresh(const QString& url = {});
  // The key saved for an endpoint, for starting a chat with it ("" = none).
  Q_INVOKABLE QString apiKey(const QString& url) const;
  // Remembers the remote model in use; an empty url forgets it.
  Q_INVOKABLE void remember(const QString& url, const QString& model);

 signals:
  void endpointsChanged();
  void lastUsedChanged();

 private:
  struct Entry {
    QString url, apiKey;
    QStringList models{};
    bool listing = false;
    QString error{};
    quint64 request = 0;  // the listing whose answer counts
  };
  Entry* find(const QString& url);
  const Entry* find(const QString& url) const;
  void list(Entry& entry);
  void save() const;

  QThread thread_;
  RemoteWorker* worker_ = nullptr;  // lives on thread_
  std::vector<Entry> entries_;
  quint64 nextRequest_ = 1;
  std::stop_source stop_;  // closing the app ends listings still out
};

}  // namespace kiln::gui
