#include "model_catalogue.h"

#include <QCoreApplication>
#include <algorithm>

#include "kiln/engine.h"
#ifdef KILN_HAVE_DOWNLOAD
#include "download/hub.h"
#include "download/hub_errors.h"
#endif

namespace kiln::gui {

namespace {

// "gemma3-270m" -> "270M", the size in repository names ("270m") and on screen.
QString sizeLabel(const std::string& preset) { return QString::fromStdString(preset.substr(preset.find('-') + 1)).toUpper(); }

// The download a row stands for, from a repository's listing: every safetensors shard of a
// release, the one GGUF of a QAT repository, the Q8_0 file of a GGUF collection.
[[maybe_unused]] double downloadBytes(const QString& kind, const std::string& path, uint64_t size) {
  const QString name = QString::fromStdString(path);
  if (kind == QLatin1String("it")) return name.endsWith(QLatin1String(".safetensors")) ? double(size) : 0;
  if (kind == QLatin1String("qat")) return name.endsWith(QLatin1String(".gguf")) ? double(size) : 0;
  return name.endsWith(QLatin1String(".gguf")) && name.contains(QLatin1String("q8_0"), Qt::CaseInsensitive) ? double(size) : 0;
}

}  // namespace

ModelCatalogue::ModelCatalogue(QObject* parent) : QAbstractListModel(parent) {
  for (const std::string& preset : kiln::released_models()) {
    const kiln::ModelInfo info = kiln::released_model_info(preset);
    const QString size = sizeLabel(preset), lower = size.toLower();
    const QVariantMap anyPrecision{{"fp32", double(info.bytes_f32)}, {"fp16", double(info.bytes_f16)},
                                   {"int8", double(info.bytes_q8_0)}, {"int4", double(info.bytes_q4_0)}};
    // Google's instruction-tuned release (bf16 safetensors, the size of FP16), loadable at any precision.
    entries_ << Entry{QStringLiteral("Gemma 3 %1 IT").arg(size), size, QStringLiteral("it"),
                      QStringLiteral("google/gemma-3-%1-it").arg(lower), QStringLiteral("safetensors"),
                      double(info.bytes_f16), false, anyPrecision};
    // Quantization-aware trained: Q4_0 weights that keep close to bf16 quality; runs as stored.
    entries_ << Entry{QStringLiteral("Gemma 3 %1 IT QAT").arg(size), size, QStringLiteral("qat"),
                      QStringLiteral("google/gemma-3-%1-it-qat-q4_0-gguf").arg(lower), QStringLiteral("gguf"),
                      double(info.bytes_q4_0), false, QVariantMap{{"auto", double(info.bytes_q4_0)}}};
    // llama.cpp's own conversions (Q4_K_M, Q8_0 and others): one file each, memory as stored.
    entries_ << Entry{QStringLiteral("Gemma 3 %1 IT GGUF").arg(size), size, QStringLiteral("gguf"),
                      QStringLiteral("ggml-org/gemma-3-%1-it-GGUF").arg(lower), QStringLiteral("gguf"),
                      double(info.bytes_q8_0), false, QVariantMap{{"auto", double(info.bytes_q8_0)}}};
  }
}

ModelCatalogue::~ModelCatalogue() = default;  // the jthread asks its request to stop and joins

int ModelCatalogue::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }

QVariant ModelCatalogue::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= entries_.size()) return {};
  const Entry& e = entries_[index.row()];
  switch (role) {
    case NameRole: return e.name;
    case SizeRole: return e.size;
    case KindRole: return e.kind;
    case RepoRole: return e.repo;
    case FormatRole: return e.format;
    case DownloadBytesRole: return e.downloadBytes;
    case SizeKnownRole: return e.sizeKnown;
    case MemoryRole: return e.memory;
    case FitsRole: {
      QVariantMap fit;
      for (auto it = e.memory.begin(); it != e.memory.end(); ++it) fit[it.key()] = fits(it.value().toDouble());
      return fit;
    }
    case NoteRole:
      if (e.kind == QLatin1String("qat")) return tr("Quantization-aware trained: INT4 weights close to full quality.");
      if (e.kind == QLatin1String("gguf")) return tr("llama.cpp's GGUF files; the size shown is the Q8_0 file.");
      return tr("Google's release; loads at any precision. Gated: accept the licence on Hugging Face first.");
  }
  return {};
}

QHash<int, QByteArray> ModelCatalogue::roleNames() const {
  return {{NameRole, "name"},         {SizeRole, "size"},          {KindRole, "kind"},
          {RepoRole, "repo"},         {FormatRole, "format"},      {DownloadBytesRole, "downloadBytes"},
          {SizeKnownRole, "sizeKnown"}, {MemoryRole, "memory"},    {FitsRole, "fits"},
          {NoteRole, "note"}};
}

void ModelCatalogue::setMemoryBytes(double bytes) {
  if (memoryBytes_ == bytes) return;
  memoryBytes_ = bytes;
  emit memoryBytesChanged();
  if (!entries_.isEmpty()) emit dataChanged(index(0), index(int(entries_.size()) - 1), {FitsRole});
}

void ModelCatalogue::setEndpoint(const QString& endpoint) {
  if (endpoint_ == endpoint) return;
  endpoint_ = endpoint;
  emit hubChanged();
}

bool ModelCatalogue::fits(double bytes) const {
  // The system, the app and a context cache need room too: a fifth of the memory, at least 1 GiB.
  const double margin = std::max(memoryBytes_ * 0.2, 1024.0 * 1024 * 1024);
  return memoryBytes_ <= 0 || bytes + margin <= memoryBytes_;
}

void ModelCatalogue::refresh() {
  if (hubState_ == QLatin1String("checking")) return;
  hubState_ = QStringLiteral("checking");
  hubMessage_.clear();
  emit hubChanged();
#ifdef KILN_HAVE_DOWNLOAD
  kiln::HubOptions options = kiln::hub_options_from_env();
  if (!endpoint_.isEmpty()) options.endpoint = endpoint_.toStdString();
  options.max_attempts = 1;  // a catalogue waits for no retries: offline shows at once
  QList<QPair<QString, QString>> repos;  // (repo, kind)
  for (const Entry& e : entries_) repos << qMakePair(e.repo, e.kind);
  asking_ = std::make_unique<std::jthread>([this, options, repos](std::stop_token stop) {
    QString firstError;
    int answered = 0;
    for (const auto& [repo, kind] : repos) {
      if (stop.stop_requested()) return;
      try {
        double bytes = 0;
        for (const kiln::HubFile& file : kiln::list_repo_files(options, repo.toStdString(), stop))
          bytes += downloadBytes(kind, file.path, file.size);
        ++answered;
        QMetaObject::invokeMethod(this, [this, repo, bytes] { onSize(repo, bytes); });
      } catch (const kiln::HubError&) {
        ++answered;  // the hub answered (a gated or renamed repository): it is there; the estimate stays
      } catch (const std::exception& e) {
        if (firstError.isEmpty()) firstError = QString::fromStdString(e.what());
        if (answered == 0) break;  // the first one failed: the hub is not there, do not ask 14 more times
      }
    }
    const QString error = answered == 0 ? firstError : QString();
    QMetaObject::invokeMethod(this, [this, error] { onHubDone(error); });
  });
#else
  onHubDone(tr("this build has no downloads"));
#endif
}

void ModelCatalogue::onSize(const QString& repo, double bytes) {
  for (qsizetype i = 0; i < entries_.size(); ++i) {
    if (entries_[i].repo != repo || bytes <= 0) continue;
    entries_[i].downloadBytes = bytes;
    entries_[i].sizeKnown = true;
    emit dataChanged(index(int(i)), index(int(i)), {DownloadBytesRole, SizeKnownRole});
  }
}

void ModelCatalogue::onHubDone(const QString& error) {
  hubState_ = error.isEmpty() ? QStringLiteral("reachable") : QStringLiteral("unreachable");
  hubMessage_ = error.isEmpty() ? QString() : tr("The hub cannot be reached (%1). The list shows what Kiln knows; sizes are estimates.").arg(error);
  emit hubChanged();
}

}  // namespace kiln::gui
