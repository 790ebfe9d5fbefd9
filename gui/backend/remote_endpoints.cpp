#include "remote_endpoints.h"

#include <QSettings>

#include "remote_worker.h"

namespace kiln::gui {

namespace {
const QString kGroup = QStringLiteral("remote/endpoints");
}  // namespace

RemoteEndpoints::RemoteEndpoints(QObject* parent) : QObject(parent) {
  worker_ = new RemoteWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(worker_, &RemoteWorker::modelsListed, this, [this](quint64 request, const QStringList& models) {
    for (Entry& e : entries_)
      if (e.request == request) {
        e.listing = false;
        e.models = models;
        e.error = models.isEmpty() ? tr("The endpoint lists no models.") : QString();
        emit endpointsChanged();
      }
  });
  connect(worker_, &RemoteWorker::listFailed, this, [this](quint64 request, const QString& message) {
    for (Entry& e : entries_)
      if (e.request == request) {
        e.listing = false;
        e.models.clear();
        e.error = message;
        emit endpointsChanged();
      }
  });
  thread_.setObjectName(QStringLiteral("kiln-remote-list"));
  thread_.start();

  QSettings settings;
  const int count = settings.beginReadArray(kGroup);
  for (int i = 0; i < count; ++i) {
    settings.setArrayIndex(i);
    const QString url = settings.value(QStringLiteral("url")).toString();
    if (!url.isEmpty()) entries_.push_back({url, settings.value(QStringLiteral("apiKey")).toString()});
  }
  settings.endArray();
  // The lists are read when the page asks (refresh), not at every start: an endpoint may be far away.
}

RemoteEndpoints::~RemoteEndpoints() {
  stop_.request_stop();  // a listing still out gives up within a second
  thread_.quit();
  thread_.wait();
}

bool RemoteEndpoints::available() { return RemoteWorker::available(); }

QVariantList RemoteEndpoints::endpoints() const {
  QVariantList list;
  for (const Entry& e : entries_)
    list << QVariantMap{{"url", e.url},          {"root", RemoteWorker::apiRoot(e.url)},
                        {"hasKey", !e.apiKey.isEmpty()}, {"models", e.models},
                        {"listing", e.listing},  {"error", e.error}};
  return list;
}

QString RemoteEndpoints::add(const QString& url, const QString& apiKey) {
  const QString trimmed = url.trimmed();
  if (!available()) return tr("This build of Kiln cannot reach remote endpoints.");
  if (RemoteWorker::apiRoot(trimmed).isEmpty())
    return tr("“%1” is not a web address (http:// or https://).").arg(trimmed);
  Entry* entry = find(trimmed);
  if (!entry) {
    entries_.push_back({trimmed, {}});
    entry = &entries_.back();
  }
  entry->apiKey = apiKey.trimmed();
  save();
  list(*entry);
  return {};
}

void RemoteEndpoints::remove(const QString& url) {
  std::erase_if(entries_, [&](const Entry& e) { return e.url == url; });
  save();
  emit endpointsChanged();
  emit lastUsedChanged();  // it may have been this endpoint's
}

void RemoteEndpoints::refresh(const QString& url) {
  for (Entry& e : entries_)
    if (url.isEmpty() || e.url == url) list(e);
}

QVariantMap RemoteEndpoints::lastUsed() const {
  QSettings settings;
  const QString url = settings.value(QStringLiteral("remote/lastUsed/url")).toString();
  if (url.isEmpty() || !find(url)) return {};  // an endpoint removed since is not started with
  return {{"url", url}, {"model", settings.value(QStringLiteral("remote/lastUsed/model")).toString()}};
}

void RemoteEndpoints::remember(const QString& url, const QString& model) {
  QSettings settings;
  if (url.isEmpty()) {
    if (!settings.contains(QStringLiteral("remote/lastUsed/url"))) return;
    settings.remove(QStringLiteral("remote/lastUsed"));
  } else {
    settings.setValue(QStringLiteral("remote/lastUsed/url"), url);
    settings.setValue(QStringLiteral("remote/lastUsed/model"), model);
  }
  emit lastUsedChanged();
}

QString RemoteEndpoints::apiKey(const QString& url) const {
  const Entry* e = find(url);
  return e ? e->apiKey : QString();
}

RemoteEndpoints::Entry* RemoteEndpoints::find(const QString& url) {
  for (Entry& e : entries_)
    if (e.url == url) return &e;
  return nullptr;
}

const RemoteEndpoints::Entry* RemoteEndpoints::find(const QString& url) const {
  for (const Entry& e : entries_)
    if (e.url == url) return &e;
  return nullptr;
}

void RemoteEndpoints::list(Entry& entry) {
  entry.request = nextRequest_++;
  entry.listing = true;
  entry.error.clear();
  emit endpointsChanged();
  QMetaObject::invokeMethod(worker_, [worker = worker_, id = entry.request, url = entry.url, key = entry.apiKey,
                                      stop = stop_.get_token()] {
    if (!stop.stop_requested()) worker->listModels(id, url, key, stop);
  });
}

void RemoteEndpoints::save() const {
  QSettings settings;
  settings.remove(kGroup);
  settings.beginWriteArray(kGroup, static_cast<int>(entries_.size()));
  for (int i = 0; i < static_cast<int>(entries_.size()); ++i) {
    settings.setArrayIndex(i);
    settings.setValue(QStringLiteral("url"), entries_[i].url);
    // Kept as the Hugging Face token is: in the user's own settings file.
    if (!entries_[i].apiKey.isEmpty()) settings.setValue(QStringLiteral("apiKey"), entries_[i].apiKey);
  }
  settings.endArray();
}

}  // namespace kiln::gui
