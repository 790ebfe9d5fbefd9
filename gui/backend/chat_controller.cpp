#include "chat_controller.h"

#include <algorithm>
#include <limits>

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QUrl>

#include "conversation_branches.h"
#include "conversation_export.h"
#include "engine_facts.h"
#include "image_attachments.h"

namespace kiln::gui {

namespace {

constexpr int kTitleChars = 48;

// A title from the first line of the first question, cut at a word where it can be.
QString titleFrom(const QString& text) {
  QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() <= kTitleChars) return line;
  line.truncate(kTitleChars);
  const int space = line.lastIndexOf(QLatin1Char(' '));
  if (space > kTitleChars / 2) line.truncate(space);
  return line + QStringLiteral("…");
}

QString localPath(const QVariant& file) {
  const QUrl url = file.toUrl();
  return url.isLocalFile() ? url.toLocalFile() : file.toString();
}

ConversationExport::Format exportFormat(const QString& name) {
  return name.compare(QLatin1String("json"), Qt::CaseInsensitive) == 0 ? ConversationExport::Format::Json
                                                                        : ConversationExport::Format::Markdown;
}

MessageStats toMessageStats(const kiln::GenerationStats& s) {
  MessageStats out;
  out.promptTokens = s.prompt_tokens;
  out.generatedTokens = s.generated_tokens;
  out.timeToFirstTokenMs = s.time_to_first_token_ms;
  out.tokensPerSecond = s.decode_tokens_per_s;
  out.totalMs = s.total_ms;
  out.stopReason = QString::fromStdString(kiln::to_string(s.stop_reason));
  out.rolledOff = s.rolled_off_messages;
  for (const std::string& note : s.notes) out.notes << QString::fromStdString(note);
  return out;
}

}  // namespace

ChatController::ChatController(QObject* parent) : ChatController(ConversationStore::defaultDirectory(), parent) {}

ChatController::ChatController(const QString& directory, QObject* parent)
    : QObject(parent),
      store_(directory),
      conversations_(new ConversationListModel(all_, this)),
      messages_(new MessageListModel(this)) {
  messages_->setImageDirectory(store_.imageDirectory());
  flushTimer_.setSingleShot(true);
  flushTimer_.setInterval(kFlushMs);
  connect(&flushTimer_, &QTimer::timeout, this, &ChatController::flushPendingText);
  auto loaded = store_.loadAll();
  for (Conversation& c : loaded.conversations) all_.push_back(std::make_unique<Conversation>(std::move(c)));
  storageErrors_ = loaded.errors;
  conversations_->refresh();
  if (conversations_->rowCount() > 0) select(conversations_->idAt(0));
  else newConversation();
}

ChatController::~ChatController() {
  // The engine may outlive us for a moment: make sure our answer stops and nothing calls back.
  if (engine_) {
    if (generating()) engine_->stop();
    disconnect(engine_, nullptr, this, nullptr);
  }
}

void ChatController::setEngine(EngineController* engine) {
  if (engine_ == engine) return;
  if (engine_) disconnect(engine_, nullptr, this, nullptr);
  engine_ = engine;
  if (engine_) {
    connect(engine_, &EngineController::textArrived, this, [this](quint64 id, const QString& text) {
      if (id == active_.id) onText(text);
    });
    connect(engine_, &EngineController::generationFinished, this,
            [this](quint64 id, const kiln::GenerationStats& stats) { finishAnswer(id, &stats, {}); });
    connect(engine_, &EngineController::generationFailed, this,
            [this](quint64 id, const QString& message) { finishAnswer(id, nullptr, message); });
  }
  emit engineChanged();
}

void ChatController::setSettings(AppSettings* settings) {
  if (settings_ == settings) return;
  settings_ = settings;
  emit settingsChanged();
}

Conversation* ChatController::find(const QString& id) const {
  const auto it = std::find_if(all_.begin(), all_.end(), [&](const auto& c) { return c->id == id; });
  return it == all_.end() ? nullptr : it->get();
}

QString ChatController::currentId() const { return current() ? current()->id : QString(); }
QString ChatController::currentTitle() const { return current() ? current()->title : QString(); }
QString ChatController::systemPrompt() const { return current() ? current()->systemPrompt : QString(); }

void ChatController::setSystemPrompt(const QString& prompt) {
  Conversation* c = current();
  if (!c || c->systemPrompt == prompt) return;
  c->systemPrompt = prompt;
  touchAndSave(*c);
  emit currentChanged();
}

QString ChatController::newConversation() {
  // An untouched conversation on screen is already a new one: don't pile up empty ones.
  if (Conversation* c = current(); c && c->messages.isEmpty() && c->systemPrompt.isEmpty() && c->title.isEmpty())
    return c->id;
  auto conversation = std::make_unique<Conversation>();
  conversation->id = ConversationStore::newId();
  conversation->created = conversation->updated = QDateTime::currentDateTimeUtc();
  const QString id = conversation->id;
  all_.push_back(std::move(conversation));
  conversations_->setSearchText({});
  conversations_->refresh();
  select(id);
  return id;
}

void ChatController::select(const QString& id) {
  Conversation* c = find(id);
  if (!c || c == current()) return;
  // Leaving an empty, never-saved conversation behind: drop it instead of listing it.
  if (Conversation* old = current(); old && old->messages.isEmpty() && old->systemPrompt.isEmpty() && old->title.isEmpty()) {
    messages_->setConversation(nullptr);
    std::erase_if(all_, [old](const auto& p) { return p.get() == old; });
    conversations_->refresh();
  }
  messages_->setConversation(c);
  setLastError({});
  emit currentChanged();
}

void ChatController::rename(const QString& id, const QString& title) {
  Conversation* c = find(id);
  const QString trimmed = title.simplified();
  if (!c || trimmed.isEmpty() || c->title == trimmed) return;
  c->title = trimmed;
  addStorageError(store_.save(*c));  // renaming is not new activity: keep its place in the list
  conversations_->updated(c);
  if (c == current()) emit currentChanged();
}

void ChatController::remove(const QString& id) {
  Conversation* c = find(id);
  if (!c) return;
  if (generating() && active_.conversationId == id) stop();
  addStorageError(store_.remove(id));
  const bool wasCurrent = c == current();
  if (wasCurrent) messages_->setConversation(nullptr);
  std::erase_if(all_, [c](const auto& p) { return p.get() == c; });
  addStorageError(store_.pruneImages(imagesInUse()));  // its pictures go with it
  conversations_->refresh();
  if (wasCurrent) {
    if (conversations_->rowCount() > 0) select(conversations_->idAt(0));
    else newConversation();
    emit currentChanged();
  }
}

namespace {
template <typename Messages>
void collectImages(const Messages& messages, QSet<QString>& out) {
  for (const Message& m : messages) {
    for (const MessageImage& image : m.images) out.insert(image.file);
    for (const std::vector<Message>& branch : m.others) collectImages(branch, out);
  }
}
}  // namespace

QSet<QString> ChatController::imagesInUse() const {
  QSet<QString> used;
  for (const auto& c : all_) collectImages(c->messages, used);
  return used;
}

bool ChatController::readyToAnswer() {
  if (generating()) {
    setLastError(tr("Wait for the answer to finish, or stop it."));
    return false;
  }
  if (!engine_ || !engine_->modelLoaded()) {
    setLastError(tr("No model is loaded. Open one on the Models page."));
    return false;
  }
  if (!current()) return false;
  return true;
}

QStringList ChatController::pendingImages() const {
  QStringList urls;
  for (const QString& path : pendingImages_) urls << QUrl::fromLocalFile(path).toString();
  return urls;
}

bool ChatController::attachImage(const QVariant& file) {
  const QString path = localPath(file);
  if (engine_ && engine_->modelLoaded() && !engine_->modelInfo().value(QStringLiteral("vision")).toBool() &&
      !engine_->remote()) {
    setLastError(tr("This model cannot see images. Load a model with a vision tower (Gemma 3 4B, 12B or 27B; a "
                    "GGUF file needs its mmproj file beside it)."));
    return false;
  }
  if (const QString problem = ImageAttachments::check(path); !problem.isEmpty()) {
    setLastError(problem);
    return false;
  }
  pendingImages_ << path;
  setLastError({});
  emit pendingImagesChanged();
  return true;
}

void ChatController::removePendingImage(int index) {
  if (index < 0 || index >= pendingImages_.size()) return;
  pendingImages_.removeAt(index);
  emit pendingImagesChanged();
}

bool ChatController::send(const QString& text) {
  if ((text.trimmed().isEmpty() && pendingImages_.isEmpty()) || !readyToAnswer()) return false;
  Conversation& c = *current();
  Message question;
  question.text = text;
  // The images go into the store first: a file that went away since it was attached is an error
  // here, with the text and the images kept for another try.
  if (const QString problem = ImageAttachments::store(pendingImages_, store_, question.images); !problem.isEmpty()) {
    setLastError(problem);
    return false;
  }
  if (!question.images.isEmpty()) {
    pendingImages_.clear();
    emit pendingImagesChanged();
  }
  if (c.title.isEmpty()) c.title = titleFrom(text.trimmed().isEmpty() ? question.images.front().name : text);
  messages_->append(question);
  return startAnswer(c);
}

bool ChatController::regenerate() {
  if (!readyToAnswer()) return false;
  Conversation& c = *current();
  if (c.messages.isEmpty()) return false;
  Message answer;
  if (const int last = static_cast<int>(c.messages.size()) - 1; c.messages.last().role == Message::Role::Assistant) {
    answer = asNewVersion(c.messages, last, Message{});
    messages_->truncate(last);
  }
  if (c.messages.isEmpty()) return false;
  return startAnswer(c, std::move(answer));
}

bool ChatController::editAndResend(int row, const QString& text) {
  if (text.trimmed().isEmpty() || !readyToAnswer()) return false;
  Conversation& c = *current();
  if (row < 0 || row >= c.messages.size() || c.messages[row].role != Message::Role::User) return false;
  Message question;
  question.text = text;
  question.images = c.messages[row].images;  // an edit changes the words; the pictures stay
  question = asNewVersion(c.messages, row, std::move(question));
  messages_->replaceFrom(row, {question});
  c.rolledOff = 0;  // the history changed: where it may start is worked out afresh
  return startAnswer(c);
}

bool ChatController::switchVariant(int row, int variant) {
  Conversation* c = current();
  if (!c || (generating() && active_.conversationId == c->id)) return false;
  if (row < 0 || row >= c->messages.size() || variant - 1 == c->messages[row].variant) return false;
  QList<Message> tail = switchedTail(c->messages, row, variant - 1);
  if (tail.isEmpty()) return false;
  messages_->replaceFrom(row, tail);
  c->rolledOff = 0;
  addStorageError(store_.save(*c));  // looking at another version is no new activity: keep its place
  conversations_->updated(c);
  return true;
}

std::vector<kiln::ChatMessage> ChatController::historyFor(const Conversation& c) const {
  std::vector<kiln::ChatMessage> history;
  if (!c.systemPrompt.trimmed().isEmpty()) history.push_back({kiln::Role::System, c.systemPrompt.toStdString(), {}});
  for (qsizetype i = 0; i < c.messages.size(); ++i) {
    const Message& m = c.messages[i];
    const kiln::Role role = m.role == Message::Role::User ? kiln::Role::User : kiln::Role::Assistant;
    // An answer that failed or was stopped before writing anything is no turn of the model's.
    if (role == kiln::Role::Assistant && m.text.isEmpty()) continue;
    // Gemma's chat format needs user and model turns to alternate, but a conversation can hold two
    // questions in a row (the model was busy, or the answer between them failed): one turn.
    // Images whose answer failed at once (a corrupt file, say) stay out: the model never saw
    // them, and the conversation goes on without them.
    const bool failedAtOnce = i + 1 < c.messages.size() && c.messages[i + 1].text.isEmpty() &&
                              !c.messages[i + 1].error.isEmpty();
    std::vector<kiln::Image> images;
    if (!failedAtOnce) images = ImageAttachments::forEngine(m.images, store_);
    if (!history.empty() && history.back().role == role) {
      history.back().content += "\n\n" + m.text.toStdString();
      for (kiln::Image& image : images) history.back().images.push_back(std::move(image));
    } else {
      history.push_back({role, m.text.toStdString(), std::move(images)});
    }
  }
  return history;
}

bool ChatController::startAnswer(Conversation& c, Message answer) {
  kiln::GenerateOptions options;
  if (settings_) {
    options.sampling = settings_->samplingChoice();  // only what the user set; the rest: the model's
    options.max_tokens = settings_->maxTokens();
  }
  // 0: until the model ends its turn; the context is then the only cap.
  if (options.max_tokens <= 0) options.max_tokens = std::numeric_limits<int>::max();
  // A long conversation loses its oldest turns rather than failing; it starts where the last
  // answer's did, so the engine reuses its cache until more must go.
  options.roll_off_old_turns = true;
  options.roll_off_at_least = c.rolledOff;
  const quint64 id = engine_->startChat(historyFor(c), options);
  if (id == 0) {
    if (!answer.others.empty()) {  // a regenerate: the answer it set aside comes back
      std::vector<Message> back = std::move(answer.others.back());
      answer.others.pop_back();
      back.front().others = std::move(answer.others);
      back.front().variant = static_cast<int>(back.front().others.size());
      messages_->replaceFrom(static_cast<int>(c.messages.size()), QList<Message>(back.begin(), back.end()));
    }
    setLastError(tr("The model is busy; try again in a moment."));
    touchAndSave(c);  // the question itself is kept
    return false;
  }
  touchAndSave(c);  // the question is on disk before the answer starts
  answer.role = Message::Role::Assistant;
  answer.streaming = true;
  messages_->append(answer);
  active_ = {id, c.id};
  setLastError({});
  emit currentChanged();
  emit generatingChanged();
  return true;
}

void ChatController::onText(const QString& text) {
  pendingText_ += text;
  if (flushTimer_.isActive()) return;  // a flush is due soon and will take this along
  flushPendingText();
  flushTimer_.start();
}

void ChatController::flushPendingText() {
  if (pendingText_.isEmpty()) return;
  Conversation* c = find(active_.conversationId);
  if (c && !c->messages.isEmpty()) {
    if (c == current()) messages_->appendText(static_cast<int>(c->messages.size()) - 1, pendingText_);
    else c->messages.last().text += pendingText_;
  }
  pendingText_.clear();
}

void ChatController::finishAnswer(quint64 id, const kiln::GenerationStats* stats, const QString& error) {
  if (id != active_.id) return;
  flushTimer_.stop();
  flushPendingText();
  const QString conversationId = active_.conversationId;
  active_ = {};
  if (Conversation* c = find(conversationId); c && !c->messages.isEmpty()) {
    Message& answer = c->messages.last();
    answer.streaming = false;
    answer.hasStats = stats != nullptr;
    if (stats) answer.stats = toMessageStats(*stats);
    if (stats) c->rolledOff = stats->rolled_off_messages;
    answer.error = error;
    if (c == current()) messages_->changed(static_cast<int>(c->messages.size()) - 1);
    touchAndSave(*c);
  }
  emit generatingChanged();
  if (stats) emit answerFinished(conversationId, statsToMap(*stats));
  else emit answerFailed(conversationId, error);
}

void ChatController::stop() {
  if (generating() && engine_) engine_->stop();
}

QString ChatController::exportCurrent(const QVariant& file, const QString& format) {
  const Conversation* c = current();
  const QString path = localPath(file);
  if (!c || path.isEmpty()) return {};
  QString error;
  const QString written = ConversationExport::write(*c, path, exportFormat(format), error);
  setLastError(error);
  return written;
}

QString ChatController::suggestedFileName(const QString& format) const {
  const Conversation* c = current();
  return c ? ConversationExport::suggestedFileName(*c, exportFormat(format)) : QString();
}

QUrl ChatController::suggestedExportFile(const QString& format) const {
  QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (folder.isEmpty() || !QDir(folder).exists()) folder = QDir::homePath();
  return QUrl::fromLocalFile(QDir(folder).filePath(suggestedFileName(format)));
}

QUrl ChatController::folderOf(const QUrl& file) {
  return QUrl::fromLocalFile(QFileInfo(file.toLocalFile()).absolutePath());
}

QString ChatController::importFrom(const QVariant& file) {
  auto conversation = std::make_unique<Conversation>();
  const QString problem = ConversationExport::read(localPath(file), *conversation);
  if (!problem.isEmpty()) {
    setLastError(problem);
    return {};
  }
  // Always a new conversation: importing the same file twice, or one exported from here, must
  // not overwrite what is already on this computer.
  conversation->id = ConversationStore::newId();
  if (!conversation->created.isValid()) conversation->created = QDateTime::currentDateTimeUtc();
  for (Message& m : conversation->messages) m.streaming = false;
  Conversation& added = *all_.emplace_back(std::move(conversation));
  touchAndSave(added);
  conversations_->setSearchText({});
  select(added.id);
  setLastError({});
  return added.id;
}

void ChatController::touchAndSave(Conversation& c) {
  c.updated = QDateTime::currentDateTimeUtc();
  addStorageError(store_.save(c));
  conversations_->refresh();
}

void ChatController::dismissStorageErrors() {
  if (storageErrors_.isEmpty()) return;
  storageErrors_.clear();
  emit storageErrorsChanged();
}

void ChatController::setLastError(const QString& message) {
  if (lastError_ == message) return;
  lastError_ = message;
  emit lastErrorChanged();
}

void ChatController::addStorageError(const QString& message) {
  if (message.isEmpty()) return;
  storageErrors_ << message;
  emit storageErrorsChanged();
}

}  // namespace kiln::gui
