#include "conversation_export.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSaveFile>

#include "conversation_store.h"

namespace kiln::gui {

namespace {

QString extension(ConversationExport::Format format) {
  return format == ConversationExport::Format::Markdown ? QStringLiteral(".md") : QStringLiteral(".json");
}

}  // namespace

QString ConversationExport::toMarkdown(const Conversation& c) {
  QString out = QStringLiteral("# %1\n\n").arg(c.title.isEmpty() ? tr("New chat") : c.title);
  if (!c.systemPrompt.trimmed().isEmpty()) {
    out += QStringLiteral("**%1**\n\n").arg(tr("System prompt"));
    for (const QString& line : c.systemPrompt.trimmed().split(QLatin1Char('\n'))) out += QStringLiteral("> %1\n").arg(line);
    out += QLatin1Char('\n');
  }
  for (const Message& m : c.messages) {
    if (m.role == Message::Role::Assistant && m.text.isEmpty() && m.error.isEmpty()) continue;
    out += QStringLiteral("## %1\n\n").arg(m.role == Message::Role::User ? tr("You") : tr("Gemma"));
    // The pictures stay in Kiln's store; the export says which were shown.
    for (const MessageImage& image : m.images) out += QStringLiteral("*%1*\n\n").arg(tr("[Image: %1]").arg(image.name));
    if (!m.text.isEmpty()) out += m.text.trimmed() + QStringLiteral("\n\n");
    if (!m.error.isEmpty()) out += QStringLiteral("*%1*\n\n").arg(tr("The answer failed: %1").arg(m.error));
  }
  return out;
}

QString ConversationExport::suggestedFileName(const Conversation& c, Format format) {
  static const QRegularExpression refused(QStringLiteral("[\\\\/:*?\"<>|\\x00-\\x1f]"));
  QString name = c.title.isEmpty() ? tr("Conversation") : c.title;
  name.replace(refused, QStringLiteral(" "));
  name = name.simplified();
  if (name.endsWith(QStringLiteral("…"))) name.chop(1);
  if (name.isEmpty() || name.startsWith(QLatin1Char('.'))) name.prepend(tr("Conversation"));
  return name.trimmed() + extension(format);
}

QString ConversationExport::withExtension(const QString& path, Format format) {
  return QFileInfo(path).suffix().isEmpty() ? path + extension(format) : path;
}

QString ConversationExport::write(const Conversation& c, const QString& path, Format format, QString& error) {
  const QString target = withExtension(path, format);
  const QByteArray bytes = format == Format::Markdown ? toMarkdown(c).toUtf8()
                                                      : QJsonDocument(conversationToJson(c)).toJson(QJsonDocument::Indented);
  QSaveFile file(target);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    error = tr("%1: cannot be written (%2)").arg(target, file.errorString());
    return {};
  }
  return target;
}

QString ConversationExport::read(const QString& path, Conversation& out) {
  QFile file(path);
  if (file.size() > ConversationStore::kMaxFileBytes)
    return tr("%1: larger than %2 MiB, not read").arg(path).arg(ConversationStore::kMaxFileBytes >> 20);
  if (!file.open(QIODevice::ReadOnly)) return tr("%1: cannot be read (%2)").arg(path, file.errorString());
  QJsonParseError parseError;
  const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
  if (parseError.error != QJsonParseError::NoError || !document.isObject())
    return tr("%1: not a conversation Kiln exported (not JSON)").arg(path);
  const QString problem = conversationFromJson(document.object(), out);
  return problem.isEmpty() ? QString() : QStringLiteral("%1: %2").arg(path, problem);
}

}  // namespace kiln::gui
