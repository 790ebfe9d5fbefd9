#include "conversation_store.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>
#include <QRegularExpression>
#include <QUuid>

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace kiln::gui {

namespace {

// 1: messages only. 2: a message may keep its other versions ("others", "variant"), and a
// conversation how many messages rolled off the context ("rolled_off"). Version 1 files still load.
// 3: a user message may carry "images" ([{name, file}], the files in the image folder); only files
// with an image are written as version 3, so older Kilns still read the others.
constexpr int kFormatVersion = 3;

template <typename Messages>
bool anyImages(const Messages& messages) {
  for (const Message& m : messages) {
    if (!m.images.isEmpty()) return true;
    for (const std::vector<Message>& branch : m.others)
      if (anyImages(branch)) return true;
  }
  return false;
}

QString roleName(Message::Role role) { return role == Message::Role::User ? QStringLiteral("user") : QStringLiteral("assistant"); }

QJsonObject statsToJson(const MessageStats& s) {
  QJsonObject o{{"prompt_tokens", s.promptTokens},         {"generated_tokens", s.generatedTokens},
          {"ttft_ms", s.timeToFirstTokenMs},         {"tokens_per_s", s.tokensPerSecond},
          {"total_ms", s.totalMs},                   {"stop_reason", s.stopReason}};
  if (!s.notes.isEmpty()) o.insert("notes", QJsonArray::fromStringList(s.notes));
  if (s.rolledOff > 0) o.insert("rolled_off", s.rolledOff);
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
  s.rolledOff = o.value("rolled_off").toInt();
  return s;
}

template <typename Messages>
QJsonArray messagesToJson(const Messages& messages) {
  QJsonArray out;
  for (const Message& m : messages) {
    QJsonObject o{{"role", roleName(m.role)}, {"text", m.text}};
    if (m.hasStats) o.insert("stats", statsToJson(m.stats));
    if (!m.error.isEmpty()) o.insert("error", m.error);
    if (!m.images.isEmpty()) {
      QJsonArray images;
      for (const MessageImage& image : m.images) images.append(QJsonObject{{"name", image.name}, {"file", image.file}});
      o.insert("images", images);
    }
    if (!m.others.empty()) {
      QJsonArray others;
      for (const std::vector<Message>& branch : m.others) others.append(messagesToJson(branch));
      o.insert("others", others);
      o.insert("variant", m.variant);
    }
    out.append(o);
  }
  return out;
}

// Fills `out` from a "messages" array (or a branch of one); `where` names it in errors.
template <typename Messages>
QString messagesFromJson(const QJsonArray& messages, Messages& out, const QString& where) {
  for (qsizetype i = 0; i < messages.size(); ++i) {
    const QJsonObject o = messages.at(i).toObject();
    const QString name = where.isEmpty() ? QString::number(i + 1) : where + QLatin1Char('.') + QString::number(i + 1);
    const QString role = o.value("role").toString();
    if (role != QLatin1String("user") && role != QLatin1String("assistant"))
      return ConversationStore::tr("message %1 has an unknown role \"%2\"").arg(name, role);
    if (!o.value("text").isString()) return ConversationStore::tr("message %1 has no text").arg(name);
    Message m;
    m.role = role == QLatin1String("user") ? Message::Role::User : Message::Role::Assistant;
    m.text = o.value("text").toString();
    m.hasStats = o.value("stats").isObject();
    if (m.hasStats) m.stats = statsFromJson(o.value("stats").toObject());
    m.error = o.value("error").toString();
    for (const QJsonValue& v : o.value("images").toArray()) {
      const MessageImage image{v.toObject().value("name").toString(), v.toObject().value("file").toString()};
      // A file name only: a conversation (an imported one too) never points outside the image folder.
      if (image.file.isEmpty() || image.file.contains(QLatin1Char('/')) || image.file.contains(QLatin1Char('\\')) ||
          image.file.startsWith(QLatin1Char('.')))
        return ConversationStore::tr("message %1 has an image with a bad file name \"%2\"").arg(name, image.file);
      m.images << image;
    }
    const QJsonArray others = o.value("others").toArray();
    for (qsizetype b = 0; b < others.size(); ++b) {
      std::vector<Message> branch;
      const QString problem = messagesFromJson(others.at(b).toArray(), branch,
                                               ConversationStore::tr("%1 (version %2)").arg(name).arg(b + 1));
      if (!problem.isEmpty()) return problem;
      if (branch.empty() || branch.front().role != m.role)
        return ConversationStore::tr("message %1 has a version %2 that does not start with its role").arg(name).arg(b + 1);
      m.others.push_back(std::move(branch));
    }
    m.variant = std::clamp(o.value("variant").toInt(), 0, static_cast<int>(m.others.size()));
    out.push_back(std::move(m));
  }
  return {};
}

}  // namespace

ConversationStore::ConversationStore(QString directory) : directory_(std::move(directory)) {}

QString ConversationStore::defaultDirectory() {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/conversations");
}

QString ConversationStore::newId() { return QUuid::createUuid().toString(QUuid::WithoutBraces); }

QString ConversationStore::pathFor(const QString& id) const { return directory_ + QLatin1Char('/') + id + QStringLiteral(".json"); }

QJsonObject conversationToJson(const Conversation& c) {
  const QJsonArray messages = messagesToJson(c.messages);
  QJsonObject json{{"format", "kiln-conversation"},
          {"version", anyImages(c.messages) ? kFormatVersion : 2},
          {"id", c.id},
          {"title", c.title},
          {"system_prompt", c.systemPrompt},
          {"created", c.created.toString(Qt::ISODateWithMs)},
          {"updated", c.updated.toString(Qt::ISODateWithMs)},
          {"messages", messages}};
  if (c.rolledOff > 0) json.insert("rolled_off", c.rolledOff);
  return json;
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
  out.rolledOff = qMax(0, json.value("rolled_off").toInt());
  return messagesFromJson(json.value("messages").toArray(), out.messages, {});
}

namespace {

// Reads one conversation file; "" or what is wrong with it (without the file name). `damaged`:
// the bytes are not JSON at all (a torn write, a disk error), as opposed to a file that is whole
// but not one this version reads (a newer Kiln's, someone else's).
QString readConversation(const QString& path, Conversation& out, bool* damaged = nullptr) {
  QFile file(path);
  if (file.size() > ConversationStore::kMaxFileBytes)
    return ConversationStore::tr("larger than %1 MiB, not read").arg(ConversationStore::kMaxFileBytes >> 20);
  if (!file.open(QIODevice::ReadOnly)) return ConversationStore::tr("cannot be read (%1)").arg(file.errorString());
  QJsonParseError parseError;
  const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
  if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
    const QString why = parseError.error != QJsonParseError::NoError
                            ? ConversationStore::tr("%1 at byte %2").arg(parseError.errorString()).arg(parseError.offset)
                            : ConversationStore::tr("not a JSON object");
    if (damaged) *damaged = true;
    return ConversationStore::tr("not valid JSON (%1)").arg(why);
  }
  return conversationFromJson(document.object(), out);
}

// fsync of the folder, so that a rename in it survives a power cut.
void syncDirectory(const QString& directory) {
  const int fd = ::open(QFile::encodeName(directory).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A save's temporary left behind: ID.json.XXXXXX, as QSaveFile names it when it cannot use O_TMPFILE.
bool isSaveTemporary(const QString& name) {
  static const QRegularExpression pattern(QStringLiteral("^[^.]+\\.json\\.[A-Za-z0-9]{6}$"));
  return pattern.match(name).hasMatch();
}

// Finishes or drops the saves a kill interrupted: a temporary holding a whole conversation newer
// than its file (or whose file is gone) replaces it; any other temporary is removed.
void recoverInterruptedSaves(const QDir& dir) {
  bool renamed = false;
  for (const QString& name : dir.entryList(QDir::Files | QDir::Hidden, QDir::Name)) {
    if (!isSaveTemporary(name)) continue;
    const QString temporary = dir.filePath(name);
    const QString target = dir.filePath(name.left(name.size() - 7));  // without ".XXXXXX"
    Conversation saved, current;
    const bool whole = readConversation(temporary, saved).isEmpty();
    const bool newer = whole && (!QFile::exists(target) || !readConversation(target, current).isEmpty() ||
                                 saved.updated > current.updated);
    if (newer) {
      QFile::remove(target);
      renamed |= QFile::rename(temporary, target);
    } else {
      QFile::remove(temporary);
    }
  }
  if (renamed) syncDirectory(dir.path());
}

}  // namespace

ConversationStore::LoadResult ConversationStore::loadAll() const {
  LoadResult result;
  const QDir dir(directory_);
  if (!dir.exists()) return result;
  recoverInterruptedSaves(dir);
  const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
  for (const QString& name : files) {
    const QString path = dir.filePath(name);
    Conversation conversation;
    conversation.id = QFileInfo(name).completeBaseName();  // the file name is the identity
    bool damaged = false;
    const QString problem = readConversation(path, conversation, &damaged);
    if (problem.isEmpty()) {
      result.conversations.append(conversation);
      continue;
    }
    // A damaged file is moved aside (not *.json, so never read again) and reported this once;
    // nothing is deleted. A whole file this version cannot read stays, for the Kiln that can.
    const QString aside = path + QStringLiteral(".corrupt");
    if (damaged && !QFile::exists(aside) && QFile::rename(path, aside))
      result.errors << tr("%1: %2; moved aside to %3").arg(path, problem, aside);
    else
      result.errors << QStringLiteral("%1: %2").arg(path, problem);
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
  syncDirectory(directory_);  // the rename itself survives a power cut
  return {};
}

QString ConversationStore::remove(const QString& id) const {
  QFile file(pathFor(id));
  if (file.exists() && !file.remove()) return tr("%1: cannot be deleted (%2)").arg(file.fileName(), file.errorString());
  return {};
}

QString ConversationStore::imageDirectory() const { return directory_ + QStringLiteral("/images"); }

QString ConversationStore::imagePath(const QString& file) const {
  if (file.isEmpty() || file.contains(QLatin1Char('/')) || file.startsWith(QLatin1Char('.'))) return {};
  return imageDirectory() + QLatin1Char('/') + file;
}

QString ConversationStore::pruneImages(const QSet<QString>& used) const {
  const QDir dir(imageDirectory());
  for (const QString& name : dir.entryList(QDir::Files)) {
    if (used.contains(name)) continue;
    QFile file(dir.filePath(name));
    if (!file.remove()) return tr("%1: cannot be deleted (%2)").arg(file.fileName(), file.errorString());
  }
  return {};
}

QString ConversationStore::saveImage(const QByteArray& bytes, const QString& suffix, QString* error) const {
  const QString hash = QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
  const QString file = hash + QLatin1Char('.') + suffix.toLower();
  const QString path = imagePath(file);
  if (QFileInfo(path).size() == bytes.size()) return file;  // the same image, attached before
  if (!QDir().mkpath(imageDirectory())) {
    if (error) *error = tr("%1: cannot create the folder").arg(imageDirectory());
    return {};
  }
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit()) {
    if (error) *error = tr("%1: cannot be written (%2)").arg(path, out.errorString());
    return {};
  }
  return file;
}

}  // namespace kiln::gui
