#include "conversation_store.h"

#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUuid>

namespace kiln::gui {

namespace {

constexpr int kFormatVersion = 1;

QString roleName(Message::Role role) { return role == Message::Role::User ? QStringLiteral("user") : QStringLiteral("assistant"); }

QJsonObject statsToJson(const MessageStats& s) {
  QJsonObject o{{"prompt_tokens", s.promptTokens},         {"generated_tokens", s.generatedTokens},
          {"ttft_ms", s.timeToFirstTokenMs},         {"tokens_per_s", s.tokensPerSecond},
          {"total_ms", s.totalMs},                   {"stop_reason", s.stopReason}};
  if (!s.notes.isEmpty()) o.insert("notes", QJsonArray::fromStringList(s.notes));
  return o;
}

MessageStats statsFromJson(const QJsonObject& o) {
  MessageStats s;
  s.promptTokens = o.value("prompt_tokens").toInt();
  s.generatedTokens = o.value("generated_tokens").toInt();
  s.timeToFirstTokenMs = o.value("ttft_ms").toDouble();
  s.tokensPerSecond = o.value("tokens_per_s").toDouble();
  s.totalMs = o.value("total_ms").toDouble();
  s.stopReason = o.value("stop_reason").toString();
  for (const QJsonValue& note : o.value("notes").toArray()) s.notes << note.toString();
  return s;
}

}  // namespace

ConversationStore::ConversationStore(QString directory) : directory_(std::move(directory)) {}

QString ConversationStore::defaultDirectory() {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/conversations");
}

QString ConversationStore::newId() { return QUuid::createUuid().toString(QUuid::WithoutBraces); }

QString ConversationStore::pathFor(const QString& id) const { return directory_ + QLatin1Char('/') + id + QStringLiteral(".json"); }

QJsonObject conversationToJson(const Conversation& c) {
  QJsonArray messages;
  for (const Message& m : c.messages) {
    QJsonObject o{{"role", roleName(m.role)}, {"text", m.text}};
    if (m.hasStats) o.insert("stats", statsToJson(m.stats));
    if (!m.error.isEmpty()) o.insert("error", m.error);
    messages.append(o);
  }
  return {{"format", "kiln-conversation"},
          {"version", kFormatVersion},
          {"id", c.id},
          {"title", c.title},
          {"system_prompt", c.systemPrompt},
          {"created", c.created.toString(Qt::ISODateWithMs)},
          {"updated", c.updated.toString(Qt::ISODateWithMs)},
          {"messages", messages}};
}

QString conversationFromJson(const QJsonObject& json, Conversation& out) {
  if (json.value("format").toString() != QLatin1String("kiln-conversation"))
    return ConversationStore::tr("not a Kiln conversation (no \"format\": \"kiln-conversation\")");
  if (json.value("version").toInt() > kFormatVersion)
    return ConversationStore::tr("written by a newer Kiln (format version %1)").arg(json.value("version").toInt());
  if (!json.value("messages").isArray()) return ConversationStore::tr("has no \"messages\" list");
  out.title = json.value("title").toString();
  out.systemPrompt = json.value("system_prompt").toString();
  out.created = QDateTime::fromString(json.value("created").toString(), Qt::ISODateWithMs);
  out.updated = QDateTime::fromString(json.value("updated").toString(), Qt::ISODateWithMs);
  if (!out.updated.isValid()) out.updated = out.created;
  out.messages.clear();
  const QJsonArray messages = json.value("messages").toArray();
  for (qsizetype i = 0; i < messages.size(); ++i) {
    const QJsonObject o = messages.at(i).toObject();
    const QString role = o.value("role").toString();
    if (role != QLatin1String("user") && role != QLatin1String("assistant"))
      return ConversationStore::tr("message %1 has an unknown role \"%2\"").arg(i + 1).arg(role);
    if (!o.value("text").isString()) return ConversationStore::tr("message %1 has no text").arg(i + 1);
    Message m;
    m.role = role == QLatin1String("user") ? Message::Role::User : Message::Role::Assistant;
    m.text = o.value("text").toString();
    m.hasStats = o.value("stats").isObject();
    if (m.hasStats) m.stats = statsFromJson(o.value("stats").toObject());
    m.error = o.value("error").toString();
    out.messages.append(m);
  }
  return {};
}

ConversationStore::LoadResult ConversationStore::loadAll() const {
  LoadResult result;
  const QDir dir(directory_);
  const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
  for (const QString& name : files) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (file.size() > kMaxFileBytes) {
      result.errors << tr("%1: larger than %2 MiB, not read").arg(path).arg(kMaxFileBytes >> 20);
      continue;
    }
    if (!file.open(QIODevice::ReadOnly)) {
      result.errors << tr("%1: cannot be read (%2)").arg(path, file.errorString());
      continue;
    }
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
      const QString why = parseError.error != QJsonParseError::NoError
                              ? tr("%1 at byte %2").arg(parseError.errorString()).arg(parseError.offset)
                              : tr("not a JSON object");
      result.errors << tr("%1: not valid JSON (%2)").arg(path, why);
      continue;
    }
    Conversation conversation;
    conversation.id = QFileInfo(name).completeBaseName();  // the file name is the identity
    const QString problem = conversationFromJson(document.object(), conversation);
    if (!problem.isEmpty()) {
      result.errors << QStringLiteral("%1: %2").arg(path, problem);
      continue;
    }
    result.conversations.append(conversation);
  }
  return result;
}

QString ConversationStore::save(const Conversation& conversation) const {
  if (!QDir().mkpath(directory_)) return tr("%1: cannot create the folder").arg(directory_);
  const QString path = pathFor(conversation.id);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return tr("%1: cannot be written (%2)").arg(path, file.errorString());
  file.write(QJsonDocument(conversationToJson(conversation)).toJson(QJsonDocument::Indented));
  if (!file.commit()) return tr("%1: cannot be written (%2)").arg(path, file.errorString());
  return {};
}

QString ConversationStore::remove(const QString& id) const {
  QFile file(pathFor(id));
  if (file.exists() && !file.remove()) return tr("%1: cannot be deleted (%2)").arg(file.fileName(), file.errorString());
  return {};
}

}  // namespace kiln::gui
