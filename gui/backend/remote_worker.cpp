#include "remote_worker.h"

#include <chrono>

#include "kiln/hardware.h"
#include "utf8.h"
#ifdef KILN_HAVE_REMOTE
#include "remote/openai_client.h"
#endif

namespace kiln::gui {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kSampleIntervalMs = 100;  // as the local worker's live plots

double millisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

QString str(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

RemoteWorker::RemoteWorker(QObject* parent) : QObject(parent) { registerEngineMetaTypes(); }

#ifdef KILN_HAVE_REMOTE

namespace {

using Kind = kiln::remote::RemoteError::Kind;

// One sentence for the user per kind of failure, with the server's own words after it.
QString describe(const kiln::remote::RemoteError& e, const QString& url) {
  const QString detail = str(e.detail());
  const QString status = QString::number(e.status());
  switch (e.kind()) {
    case Kind::BadUrl:
      return RemoteWorker::tr("“%1” is not a web address (http:// or https://).").arg(url);
    case Kind::Unreachable:
      return RemoteWorker::tr("Cannot reach %1. Is the server running, and is the address right? (%2)").arg(url, detail);
    case Kind::Unauthorized:
      return e.status() == 403 || str(e.what()).contains(QStringLiteral("refused"))
                 ? RemoteWorker::tr("%1 refused the API key (HTTP %2). Add the endpoint again with the right key.").arg(url, status)
                 : RemoteWorker::tr("%1 needs an API key (HTTP %2).").arg(url, status);
    case Kind::NotFound:
      return RemoteWorker::tr("%1 has no such model or address (HTTP 404): %2").arg(url, detail);
    case Kind::ServerError:
      return e.status() >= 400 ? RemoteWorker::tr("The endpoint answered with an error (HTTP %1): %2").arg(status, detail)
                               : RemoteWorker::tr("The endpoint stopped the answer with an error: %1").arg(detail);
    case Kind::BadResponse:
      return RemoteWorker::tr("The endpoint's answer is not what an OpenAI-compatible server sends: %1").arg(detail);
    case Kind::EndedEarly:
      return RemoteWorker::tr("The connection ended before the answer did. %1").arg(detail).trimmed();
  }
  return str(e.what());
}

}  // namespace

bool RemoteWorker::available() { return true; }

QString RemoteWorker::apiRoot(const QString& url) {
  try {
    return str(kiln::remote::api_root(url.toStdString()));
  } catch (const std::exception&) {
    return {};
  }
}

void RemoteWorker::chat(const ChatRequest& request, const RemoteTarget& target) {
  const auto start = Clock::now();
  std::string pending;  // bytes of a UTF-8 character not yet complete
  int pieces = 0, piecesAtLastSample = 0;
  double lastSampleMs = 0;
  auto onText = [&](std::string_view piece) {
    pending.append(piece);
    const std::size_t complete = completeUtf8Prefix(pending);
    if (complete > 0) {
      emit textArrived(request.id, QString::fromUtf8(pending.data(), static_cast<qsizetype>(complete)));
      pending.erase(0, complete);
    }
    ++pieces;
    const double now = millisSince(start);
    if (now - lastSampleMs >= kSampleIntervalMs) {
      const double rate = (pieces - piecesAtLastSample) * 1000.0 / (now - lastSampleMs);
      emit liveSample({request.id, now, rate, static_cast<double>(kiln::resident_memory_bytes())});
      lastSampleMs = now;
      piecesAtLastSample = pieces;
    }
    return !request.options.cancel.stop_requested();
  };
  try {
    const kiln::remote::Endpoint endpoint{target.url.toStdString(), target.apiKey.toStdString()};
    const kiln::GenerationStats stats =
        kiln::remote::chat(endpoint, target.model.toStdString(), request.messages, request.options, onText);
    if (!pending.empty()) emit textArrived(request.id, QString::fromUtf8(pending.data(), static_cast<qsizetype>(pending.size())));
    emit finished(request.id, stats);
  } catch (const kiln::remote::RemoteError& e) {
    emit failed(request.id, describe(e, apiRoot(target.url).isEmpty() ? target.url : apiRoot(target.url)));
  } catch (const std::exception& e) {
    emit failed(request.id, str(e.what()));
  }
}

void RemoteWorker::listModels(quint64 requestId, const QString& url, const QString& apiKey, std::stop_token cancel) {
  try {
    QStringList names;
    for (const auto& m : kiln::remote::list_models({url.toStdString(), apiKey.toStdString()}, cancel)) names << str(m.id);
    if (cancel.stop_requested()) return;
    emit modelsListed(requestId, names);
  } catch (const kiln::remote::RemoteError& e) {
    emit listFailed(requestId, describe(e, apiRoot(url).isEmpty() ? url : apiRoot(url)));
  } catch (const std::exception& e) {
    emit listFailed(requestId, str(e.what()));
  }
}

#else  // a build without libcurl

bool RemoteWorker::available() { return false; }
QString RemoteWorker::apiRoot(const QString&) { return {}; }
void RemoteWorker::chat(const ChatRequest& request, const RemoteTarget&) {
  emit failed(request.id, tr("This build of Kiln cannot reach remote endpoints."));
}
void RemoteWorker::listModels(quint64 requestId, const QString&, const QString&, std::stop_token) {
  emit listFailed(requestId, tr("This build of Kiln cannot reach remote endpoints."));
}

#endif

}  // namespace kiln::gui
