// The released Gemma 3 models people download: each size (270M to 27B) instruction-tuned as
// Google publishes it, its QAT (quantization-aware trained) Q4_0 GGUF, and a common community
// GGUF repository; what each takes in memory at each precision and whether that fits this
// machine. Known without a network (the shapes are kiln::released_models()); the hub adds the
// files' real sizes, and when it cannot be reached the list stays and says so.
#pragma once

#include <QAbstractListModel>
#include <QPointer>
#include <QQmlEngine>
#include <QVariantMap>
#include <memory>
#include <thread>

namespace kiln::gui {

class ModelCatalogue : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  // Memory the machine has, in bytes (the Hardware page's total); 0: unknown, nothing is "too big".
  Q_PROPERTY(double memoryBytes READ memoryBytes WRITE setMemoryBytes NOTIFY memoryBytesChanged)
  // The hub to ask; "" takes KILN_HF_ENDPOINT / HF_ENDPOINT / huggingface.co, as `kiln pull` does.
  Q_PROPERTY(QString endpoint READ endpoint WRITE setEndpoint NOTIFY hubChanged)
  Q_PROPERTY(QString hubState READ hubState NOTIFY hubChanged)      // "", "checking", "reachable", "unreachable"
  Q_PROPERTY(QString hubMessage READ hubMessage NOTIFY hubChanged)  // why unreachable, in the interface language
  Q_PROPERTY(int count READ rowCount CONSTANT)

 public:
  enum Roles { NameRole = Qt::UserRole + 1, SizeRole, KindRole, RepoRole, FormatRole, DownloadBytesRole,
               SizeKnownRole, MemoryRole, FitsRole, NoteRole };

  struct Entry {
    QString name, size, kind;  // "Gemma 3 1B IT QAT", "1B", "it" / "qat" / "gguf"
    QString repo, format;      // OWNER/REPO, "safetensors" / "gguf"
    double downloadBytes = 0;  // estimated from the shape until the hub says
    bool sizeKnown = false;    // downloadBytes is the hub's sum of the weight files
    QVariantMap memory;        // precision ("fp32", "fp16", "int8", "int4", "auto") -> bytes of weights
  };

  explicit ModelCatalogue(QObject* parent = nullptr);
  ~ModelCatalogue() override;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  double memoryBytes() const { return memoryBytes_; }
  void setMemoryBytes(double bytes);
  QString endpoint() const { return endpoint_; }
  void setEndpoint(const QString& endpoint);
  QString hubState() const { return hubState_; }
  QString hubMessage() const { return hubMessage_; }

  // Asks the hub for each repository's weight files (a thread; answers arrive queued).
  Q_INVOKABLE void refresh();
  // Whether `bytes` of weights fit: they and a working margin within the machine's memory.
  Q_INVOKABLE bool fits(double bytes) const;

 signals:
  void memoryBytesChanged();
  void hubChanged();

 private:
  void onSize(const QString& repo, double bytes);
  void onHubDone(const QString& error);

  QList<Entry> entries_;
  double memoryBytes_ = 0;
  QString endpoint_, hubState_, hubMessage_;
  std::unique_ptr<std::jthread> asking_;
};

}  // namespace kiln::gui
