#include "download_controller.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <QLocale>

#ifdef KILN_HAVE_DOWNLOAD
#include "download/hf_cache.h"
#include "download/hub.h"
#include "download/hub_errors.h"
#include "kiln/types.h"
#endif

namespace kiln::gui {

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

#ifdef KILN_HAVE_DOWNLOAD
// Core names the app's token source with this; the app shows it translated.
constexpr const char* kSettingsSource = "settings";

QString sourceText(const std::string& source) {
  return source == kSettingsSource ? DownloadController::tr("the app's settings") : str(source);
}

// The hub's refusals and a full disk in the interface language; other errors stay core's English.
QString describe(const std::exception& error) {
  const auto* e = dynamic_cast<const kiln::HubError*>(&error);
  if (!e) return str(error.what());
  const QString repo = str(e->repo), page = str(e->page), from = sourceText(e->token_source);
  const bool token = !e->token_source.empty();
  const QString tokens = QStringLiteral("https://huggingface.co/settings/tokens");
  switch (e->kind) {
    case kiln::HubErrorKind::NotFoundOrNoAccess:
      return token ? DownloadController::tr("%1 was not found, or it is private or gated for the account of your token "
                                            "(from %2): check the name.").arg(repo, from)
                   : DownloadController::tr("%1 was not found, or it is private or gated: check the name, or sign in "
                                            "with a Hugging Face token in Settings → Downloads.").arg(repo);
    case kiln::HubErrorKind::InvalidToken:
      return DownloadController::tr("Your token (from %1) is invalid or expired: create a new one at %2.").arg(from, tokens);
    case kiln::HubErrorKind::LicenceNotAccepted:
      return token ? DownloadController::tr("%1 is gated: accept the licence at %2 with the account of your token (from %3).")
                         .arg(repo, page, from)
                   : DownloadController::tr("%1 is gated: accept the licence at %2, then enter a token of that account in "
                                            "Settings → Downloads.").arg(repo, page);
    case kiln::HubErrorKind::AccessPending:
      return DownloadController::tr("Your access request for %1 is pending: its authors have not reviewed it yet (%2).")
          .arg(repo, page);
    case kiln::HubErrorKind::FineGrainedToken:
      return DownloadController::tr("This fine-grained token (from %1) lacks access to gated repositories: enable "
                                    "“public gated repositories” in its settings at %2.").arg(from, tokens);
    case kiln::HubErrorKind::NotEnoughSpace: {
      const QLocale locale;
      return DownloadController::tr("Not enough free space in %1: the download needs %2, %3 are free.")
          .arg(str(e->folder), locale.formattedDataSize(qint64(std::min<uint64_t>(e->needed, INT64_MAX)), 1, QLocale::DataSizeSIFormat),
               locale.formattedDataSize(qint64(std::min<uint64_t>(e->available, INT64_MAX)), 1, QLocale::DataSizeSIFormat));
    }
    case kiln::HubErrorKind::Other:
      break;
  }
  return str(error.what());
}

kiln::HubOptions optionsFor(const QString& endpoint, const QString& token, double retryWait) {
  kiln::HubOptions options = kiln::hub_options_from_env(token.toStdString(), kSettingsSource);
  if (!endpoint.isEmpty()) options.endpoint = endpoint.toStdString();
  if (retryWait >= 0) options.backoff_base_s = retryWait;
  return options;
}
#endif

}  // namespace

DownloadController::DownloadController(QObject* parent) : QObject(parent) {
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.setObjectName(QStringLiteral("kiln-download"));
  thread_.start();
}

DownloadController::~DownloadController() {
  cancel_.request_stop();  // libcurl's transfer polls it; a listing ends at its next request
  thread_.quit();
  thread_.wait();
}

bool DownloadController::available() {
#ifdef KILN_HAVE_DOWNLOAD
  return true;
#else
  return false;
#endif
}

void DownloadController::setSettings(AppSettings* settings) {
  if (settings_ == settings) return;
  settings_ = settings;
  emit settingsChanged();
}

void DownloadController::setEndpoint(const QString& endpoint) {
  if (endpoint_ == endpoint) return;
  endpoint_ = endpoint;
  emit endpointChanged();
}

double DownloadController::totalFraction() const { return bytesTotal_ > 0 ? qBound(0.0, bytesDone_ / bytesTotal_, 1.0) : 0.0; }

QString DownloadController::token() const { return settings_ ? settings_->hfToken().trimmed() : QString(); }

// The Settings field, else HF_TOKEN, HUGGING_FACE_HUB_TOKEN and the token file of `hf auth login`.
void DownloadController::updateTokenSource() {
#ifdef KILN_HAVE_DOWNLOAD
  const kiln::HubToken found = kiln::find_hub_token(token().toStdString(), kSettingsSource);
  tokenSource_ = found.token.empty() ? QString() : sourceText(found.source);
#endif
}

void DownloadController::setError(const QString& message) {
  if (lastError_ == message) return;
  lastError_ = message;
  emit lastErrorChanged();
}

void DownloadController::cancel() { cancel_.request_stop(); }

void DownloadController::list(const QString& repoReference) {
  if (busy()) return;
  setError({});
  cancel_ = std::stop_source();
  listing_ = true;
  updateTokenSource();
  emit stateChanged();
  const QString endpoint = endpoint_, tokenText = token(), reference = repoReference.trimmed();
  const std::stop_token stop = cancel_.get_token();
  const double retryWait = retryWait_;
  const bool shared = settings_ && settings_->hubSharedCache();
  QMetaObject::invokeMethod(worker_, [this, endpoint, tokenText, reference, stop, retryWait, shared] {
#ifdef KILN_HAVE_DOWNLOAD
    QString repo = reference;
    try {
      const kiln::HubOptions options = optionsFor(endpoint, tokenText, retryWait);
      repo = str(kiln::parse_hub_reference(reference.toStdString()).repo);
      const kiln::RepoListing pinned = kiln::list_repo(options, repo.toStdString(), stop);
      const std::vector<kiln::HubFile>& listing = pinned.files;
      const QString commit = str(pinned.commit);
      QVariantList files;
      for (const kiln::HubFile& f : listing)
        files << QVariantMap{{"path", str(f.path)}, {"size", double(f.size)}, {"lfs", !f.sha256.empty()},
                              {"sha256", str(f.sha256)}, {"gitOid", str(f.git_oid)}, {"local", false}};
      QStringList suggested;
      try {
        for (const kiln::HubFile& f : kiln::files_to_pull(listing, repo.toStdString())) suggested << str(f.path);
      } catch (const std::exception&) {
        // Several GGUF files or nothing runnable: the user picks; nothing is preselected.
      }
      const QString folder = shared ? str(kiln::hf_snapshot_dir(kiln::hf_download_cache_dir(), repo.toStdString(),
                                                                pinned.commit))
                                    : str(kiln::local_repo_dir(repo.toStdString()));
      QMetaObject::invokeMethod(this, [=, this] { onListed(repo, files, suggested, folder, commit, shared); },
                                Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = describe(e);
      QMetaObject::invokeMethod(this, [=, this] { onListFailed(repo, message); }, Qt::QueuedConnection);
    }
#else
    Q_UNUSED(endpoint) Q_UNUSED(tokenText) Q_UNUSED(stop) Q_UNUSED(retryWait) Q_UNUSED(shared)
    const QString message = tr("This build has no downloader (libcurl was missing).");
    QMetaObject::invokeMethod(this, [=, this] { onListFailed(reference, message); }, Qt::QueuedConnection);
#endif
  }, Qt::QueuedConnection);
}

void DownloadController::onListed(const QString& repo, const QVariantList& files, const QStringList& suggested,
                                  const QString& folder, const QString& commit, bool sharedCache) {
  listing_ = false;
  commit_ = commit;
  sharedCache_ = sharedCache;
  repo_ = repo;
  files_ = files;
  suggested_ = suggested;
  destination_ = folder;
  markLocalFiles();
  emit filesChanged();
  emit stateChanged();
  emit listed(repo, int(files.size()));
}

void DownloadController::onListFailed(const QString& repo, const QString& message) {
  listing_ = false;
  setError(message);
  emit stateChanged();
  emit listFailed(repo, message);
}

// A file counts as present when the destination holds it at its listed size.
void DownloadController::markLocalFiles() {
  for (QVariant& v : files_) {
    QVariantMap f = v.toMap();
    const QFileInfo info(QDir(destination_).filePath(f.value("path").toString()));
    f["local"] = info.isFile() && double(info.size()) == f.value("size").toDouble();
    v = f;
  }
}

void DownloadController::download(const QStringList& paths) {
  if (busy() || paths.isEmpty()) return;
  QVariantList chosen;
  double total = 0;
  for (const QVariant& v : files_) {
    const QVariantMap f = v.toMap();
    if (!paths.contains(f.value("path").toString())) continue;
    chosen << f;
    total += f.value("size").toDouble();
  }
  if (chosen.isEmpty()) return;
  setError({});
  cancel_ = std::stop_source();
  downloading_ = true;
  currentFile_ = chosen.first().toMap().value("path").toString();
  fileFraction_ = 0;
  bytesDone_ = 0;
  bytesTotal_ = total;
  bytesPerSecond_ = 0;
  attempt_ = maxAttempts_ = 1;
  reusedFiles_ = 0;
  retryMessage_.clear();
  updateTokenSource();
  emit stateChanged();
  emit progressChanged();
  const QString endpoint = endpoint_, tokenText = token(), repo = repo_, folder = destination_, commit = commit_;
  const std::stop_token stop = cancel_.get_token();
  const double retryWait = retryWait_;
  const bool shared = sharedCache_;
  QMetaObject::invokeMethod(worker_, [this, endpoint, tokenText, repo, folder, commit, shared, chosen, stop, retryWait] {
#ifdef KILN_HAVE_DOWNLOAD
    QString error;
    try {
      kiln::HubOptions options = optionsFor(endpoint, tokenText, retryWait);
      options.revision = commit.toStdString();  // the listed commit, even if main moved since
      std::vector<kiln::HubFile> files;
      for (const QVariant& v : chosen) {
        const QVariantMap f = v.toMap();
        files.push_back({f.value("path").toString().toStdString(), uint64_t(f.value("size").toDouble()),
                         f.value("sha256").toString().toStdString(), f.value("gitOid").toString().toStdString()});
      }
      kiln::check_free_space(files, folder.toStdString(), repo.toStdString());  // before the first byte, not when the disk is full
      double finished = 0;  // bytes of the files already done in this request
      for (const QVariant& v : chosen) {
        const QVariantMap f = v.toMap();
        kiln::HubFile file;
        file.path = f.value("path").toString().toStdString();
        file.size = uint64_t(f.value("size").toDouble());
        file.sha256 = f.value("sha256").toString().toStdString();
        file.git_oid = f.value("gitOid").toString().toStdString();
        const auto report = [this, finished](const kiln::DownloadProgress& p) {
          const QString name = str(p.file);
          const double done = double(p.done), total = double(p.total), speed = p.bytes_per_s;
          const int attempt = p.attempt, attempts = p.max_attempts;
          const QString retry = p.retrying ? tr("Connection problem (%1): retrying in %2 s, attempt %3 of %4.")
                                                       .arg(str(p.retry_reason)).arg(std::max(1, int(p.retry_in_s + 0.5)))
                                                       .arg(attempt).arg(attempts)
                                                 : QString();
          const bool verifying = p.verifying;  // hashing a copy: the request's bytes stay where they are
          QMetaObject::invokeMethod(this, [=, this] {
            onProgress(name, done, total, speed, verifying ? finished : finished + done, attempt, attempts, retry, verifying);
          }, Qt::QueuedConnection);
        };
        // The shared layout keeps blobs under the cache folder, three levels above the snapshot.
        const kiln::DownloadResult result =
            shared ? kiln::download_into_hf_cache(options, repo.toStdString(), file, kiln::hf_download_cache_dir(),
                                                  "main", report, stop)
                   : kiln::download_file(options, repo.toStdString(), file, folder.toStdString(), report, stop);
        if (result == kiln::DownloadResult::FromHfCache)
          QMetaObject::invokeMethod(this, [this] { ++reusedFiles_; }, Qt::QueuedConnection);
        finished += double(file.size);
        const QString name = str(file.path);
        const double size = double(file.size);
        QMetaObject::invokeMethod(this, [=, this] { onProgress(name, size, size, 0, finished); }, Qt::QueuedConnection);
      }
    } catch (const std::exception& e) {
      error = describe(e);
    }
#else
    Q_UNUSED(endpoint) Q_UNUSED(tokenText) Q_UNUSED(chosen) Q_UNUSED(stop) Q_UNUSED(commit) Q_UNUSED(shared)
    Q_UNUSED(retryWait)
    const QString error = tr("This build has no downloader (libcurl was missing).");
#endif
    QMetaObject::invokeMethod(this, [=, this] { onFinished(repo, folder, error); }, Qt::QueuedConnection);
  }, Qt::QueuedConnection);
}

void DownloadController::onProgress(const QString& file, double done, double total, double bytesPerSecond,
                                    double requestDone, int attempt, int maxAttempts, const QString& retryMessage,
                                    bool verifying) {
  currentFile_ = file;
  verifying_ = verifying;
  attempt_ = attempt;
  maxAttempts_ = maxAttempts;
  retryMessage_ = retryMessage;
  fileFraction_ = total > 0 ? qBound(0.0, done / total, 1.0) : 1.0;
  bytesDone_ = requestDone;
  bytesPerSecond_ = bytesPerSecond;
  emit progressChanged();
}

void DownloadController::onFinished(const QString& repo, const QString& folder, const QString& error) {
  downloading_ = false;
  verifying_ = false;
  bytesPerSecond_ = 0;
  retryMessage_.clear();
  markLocalFiles();
  emit filesChanged();
  emit progressChanged();
  emit stateChanged();
  if (error.isEmpty()) {
    emit downloaded(repo, folder);
  } else {
    setError(error);
    emit downloadFailed(repo, error);
  }
}

}  // namespace kiln::gui
