// The Downloads page's handle on the hub library (core/download, kiln_download): lists a
// Hugging Face repository's files and downloads the chosen ones into the folder the Models page
// scans. libcurl blocks, so every call runs on a worker thread of its own; the GUI thread only
// posts requests and receives queued results. Cancel is a std::stop_source the worker polls.
// Without kiln_download in the build (KILN_HAVE_DOWNLOAD unset) `available` is false and every
// request fails with a message saying so.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QThread>
#include <QVariantList>
#include <memory>
#include <stop_token>

#include "app_settings.h"

namespace kiln::gui {

class DownloadController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(bool available READ available CONSTANT)
  // Settings give the token; an empty field leaves HF_TOKEN, HUGGING_FACE_HUB_TOKEN and the token
  // file of `hf auth login` in charge (kiln::find_hub_token).
  Q_PROPERTY(kiln::gui::AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
  // The hub's base URL; "" = KILN_HF_ENDPOINT or https://huggingface.co (tests point it at loopback).
  Q_PROPERTY(QString endpoint READ endpoint WRITE setEndpoint NOTIFY endpointChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)          // listing or downloading
  Q_PROPERTY(bool listing READ listing NOTIFY stateChanged)
  Q_PROPERTY(bool downloading READ downloading NOTIFY stateChanged)
  Q_PROPERTY(QString repo READ repo NOTIFY filesChanged)       // the repository listed last
  // One map per file: path, size (bytes, double), lfs (bool: has a published SHA-256), local (bool: on disk).
  Q_PROPERTY(QVariantList files READ files NOTIFY filesChanged)
  Q_PROPERTY(QStringList suggested READ suggested NOTIFY filesChanged)  // what `kiln pull` would take
  Q_PROPERTY(QString currentFile READ currentFile NOTIFY progressChanged)
  Q_PROPERTY(double fileFraction READ fileFraction NOTIFY progressChanged)    // 0..1 of the current file
  Q_PROPERTY(double totalFraction READ totalFraction NOTIFY progressChanged)  // 0..1 of the whole request
  Q_PROPERTY(double bytesDone READ bytesDone NOTIFY progressChanged)
  Q_PROPERTY(double bytesTotal READ bytesTotal NOTIFY progressChanged)
  Q_PROPERTY(double bytesPerSecond READ bytesPerSecond NOTIFY progressChanged)
  // The request number of the current file (1..maxAttempts): > 1 after a dropped connection,
  // 408, 429 or 5xx; retryMessage says why and how long the wait is, "" while transferring.
  Q_PROPERTY(int attempt READ attempt NOTIFY progressChanged)
  Q_PROPERTY(int maxAttempts READ maxAttempts NOTIFY progressChanged)
  Q_PROPERTY(QString retryMessage READ retryMessage NOTIFY progressChanged)
  // Where the token comes from ("" = none: public models only), never the token; updated per request.
  Q_PROPERTY(QString tokenSource READ tokenSource NOTIFY stateChanged)
  // Errors in the interface language: the hub's refusals and a full disk are translated here.
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  Q_PROPERTY(QString destination READ destination NOTIFY filesChanged)  // local folder of `repo`
  // The commit the listing was taken at (40 hex); downloads come from it, never a newer one.
  Q_PROPERTY(QString commit READ commit NOTIFY filesChanged)
  // Settings' hubSharedCache when the listing was made: files go into the Hugging Face cache layout
  // (destination is then the snapshot folder <cache>/models--OWNER--REPO/snapshots/<commit>).
  Q_PROPERTY(bool sharedCache READ sharedCache NOTIFY filesChanged)
  // Files of the last download found (and verified) in the Hugging Face cache: linked, not fetched.
  Q_PROPERTY(int reusedFiles READ reusedFiles NOTIFY progressChanged)
  // A copy already on disk or in the Hugging Face cache is being hashed (fileFraction counts it);
  // no bytes are fetched meanwhile.
  Q_PROPERTY(bool verifying READ verifying NOTIFY progressChanged)

 public:
  explicit DownloadController(QObject* parent = nullptr);
  ~DownloadController() override;  // cancels and joins the worker thread

  static bool available();
  AppSettings* settings() const { return settings_; }
  void setSettings(AppSettings* settings);
  QString endpoint() const { return endpoint_; }
  void setEndpoint(const QString& endpoint);
  // Seconds before the first retry (doubling after); tests make it small.
  void setRetryWait(double seconds) { retryWait_ = seconds; }
  bool busy() const { return listing_ || downloading_; }
  bool listing() const { return listing_; }
  bool downloading() const { return downloading_; }
  QString repo() const { return repo_; }
  QVariantList files() const { return files_; }
  QStringList suggested() const { return suggested_; }
  QString currentFile() const { return currentFile_; }
  double fileFraction() const { return fileFraction_; }
  double totalFraction() const;
  double bytesDone() const { return bytesDone_; }
  double bytesTotal() const { return bytesTotal_; }
  double bytesPerSecond() const { return bytesPerSecond_; }
  QString lastError() const { return lastError_; }
  int attempt() const { return attempt_; }
  int maxAttempts() const { return maxAttempts_; }
  QString retryMessage() const { return retryMessage_; }
  QString tokenSource() const { return tokenSource_; }
  QString destination() const { return destination_; }
  QString commit() const { return commit_; }
  bool sharedCache() const { return sharedCache_; }
  int reusedFiles() const { return reusedFiles_; }
  bool verifying() const { return verifying_; }

  // "OWNER/REPO" (a hub URL works too). Replaces the listing; refused while busy.
  Q_INVOKABLE void list(const QString& repoReference);
  // Downloads these paths of the listed repository, one after the other; a .part left by an
  // earlier cancel or failure resumes. Refused while busy.
  Q_INVOKABLE void download(const QStringList& paths);
  Q_INVOKABLE void cancel();

 signals:
  void settingsChanged();
  void endpointChanged();
  void stateChanged();
  void filesChanged();
  void progressChanged();
  void lastErrorChanged();
  void listed(const QString& repo, int fileCount);
  void listFailed(const QString& repo, const QString& message);
  // The model's folder, ready for the Models page (its library refreshes on this).
  void downloaded(const QString& repo, const QString& folder);
  void downloadFailed(const QString& repo, const QString& message);  // cancel included

 private:
  void onListed(const QString& repo, const QVariantList& files, const QStringList& suggested, const QString& folder,
                const QString& commit, bool sharedCache);
  void onListFailed(const QString& repo, const QString& message);
  void onProgress(const QString& file, double done, double total, double bytesPerSecond, double requestDone,
                  int attempt = 1, int maxAttempts = 1, const QString& retryMessage = {}, bool verifying = false);
  void onFinished(const QString& repo, const QString& folder, const QString& error);
  void setError(const QString& message);
  QString token() const;
  void updateTokenSource();
  void markLocalFiles();

  QThread thread_;
  QObject* worker_ = nullptr;  // a plain context on thread_: requests run there as queued calls
  std::stop_source cancel_;
  QPointer<AppSettings> settings_;
  QString endpoint_;
  double retryWait_ = -1;  // < 0: HubOptions' default
  bool listing_ = false, downloading_ = false;
  QString repo_, destination_;
  QVariantList files_;
  QStringList suggested_;
  QString currentFile_;
  double fileFraction_ = 0, bytesDone_ = 0, bytesTotal_ = 0, bytesPerSecond_ = 0;
  QString lastError_;
  int attempt_ = 1, maxAttempts_ = 1;
  QString retryMessage_, tokenSource_;
  QString commit_;
  bool sharedCache_ = false;
  int reusedFiles_ = 0;
  bool verifying_ = false;
};

}  // namespace kiln::gui
