#include "conversation_list_model.h"

#include <QRegularExpression>
#include <algorithm>

namespace kiln::gui {

namespace {
constexpr int kPreviewChars = 80;
}  // namespace

QString plainTextOf(const QString& markdown) {
  static const QRegularExpression fence(QStringLiteral("^[ \\t]*(```|~~~).*$"), QRegularExpression::MultilineOption);
  static const QRegularExpression lineMarks(QStringLiteral("^[ \\t]{0,3}(#{1,6}\\s+|>\\s?|[-*+]\\s+(\\[[ xX]\\]\\s+)?|\\d+[.)]\\s+)"),
                                            QRegularExpression::MultilineOption);
  static const QRegularExpression rule(QStringLiteral("^[ \\t]*([-*_][ \\t]*){3,}$"), QRegularExpression::MultilineOption);
  static const QRegularExpression image(QStringLiteral("!\\[([^\\]]*)\\]\\([^)]*\\)"));
  static const QRegularExpression link(QStringLiteral("\\[([^\\]]*)\\]\\([^)]*\\)"));
  static const QRegularExpression emphasis(QStringLiteral("(\\*\\*|__|\\*|_|~~|`)(?=\\S)(.+?)(?<=\\S)\\1"));
  static const QRegularExpression tableBar(QStringLiteral("^[ \\t]*\\|?[ \\t]*:?-{3,}:?\\s*(\\|\\s*:?-{3,}:?\\s*)*\\|?\\s*$"),
                                           QRegularExpression::MultilineOption);
  QString text = markdown;
  text.remove(fence);
  text.remove(tableBar);
  text.remove(rule);
  text.remove(lineMarks);
  text.replace(image, QStringLiteral("\\1"));
  text.replace(link, QStringLiteral("\\1"));
  for (int pass = 0; pass < 2; ++pass) text.replace(emphasis, QStringLiteral("\\2"));  // **_nested_**
  text.replace(QLatin1Char('|'), QLatin1Char(' '));
  return text;
}

ConversationListModel::ConversationListModel(const Source& source, QObject* parent)
    : QAbstractListModel(parent), source_(source) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(visible_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Conversation& c = *visible_[static_cast<size_t>(index.row())];
  switch (role) {
    case IdRole: return c.id;
    case TitleRole: return c.title;
    case PreviewRole: {
      // The latest message with words in it, as plain text: an answer stopped before its first
      // token has none, and Markdown's marks are no part of what was said.
      for (auto m = c.messages.crbegin(); m != c.messages.crend(); ++m) {
        const QString plain = plainTextOf(m->text).simplified();
        if (!plain.isEmpty()) return plain.left(kPreviewChars);
      }
      return QString();
    }
    case UpdatedRole: return c.updated;
    case MessageCountRole: return static_cast<int>(c.messages.size());
    default: return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{IdRole, "conversationId"}, {TitleRole, "title"}, {PreviewRole, "preview"},
          {UpdatedRole, "updated"}, {MessageCountRole, "messageCount"}};
}

void ConversationListModel::setSearchText(const QString& text) {
  if (searchText_ == text) return;
  searchText_ = text;
  emit searchTextChanged();
  refresh();
}

int ConversationListModel::indexOf(const QString& id) const {
  for (size_t i = 0; i < visible_.size(); ++i)
    if (visible_[i]->id == id) return static_cast<int>(i);
  return -1;
}

QString ConversationListModel::idAt(int row) const {
  return row >= 0 && row < rowCount() ? visible_[static_cast<size_t>(row)]->id : QString();
}

bool ConversationListModel::matches(const Conversation& c) const {
  const QString needle = searchText_.trimmed();
  if (needle.isEmpty() || c.title.contains(needle, Qt::CaseInsensitive)) return true;
  return std::any_of(c.messages.begin(), c.messages.end(),
                     [&](const Message& m) { return m.text.contains(needle, Qt::CaseInsensitive); });
}

void ConversationListModel::refresh() {
  const int before = rowCount();
  beginResetModel();
  visible_.clear();
  for (const auto& c : source_)
    if (matches(*c)) visible_.push_back(c.get());
  std::stable_sort(visible_.begin(), visible_.end(),
                   [](const Conversation* a, const Conversation* b) { return a->updated > b->updated; });
  endResetModel();
  if (before != rowCount()) emit countChanged();
}

void ConversationListModel::updated(const Conversation* conversation) {
  const auto it = std::find(visible_.begin(), visible_.end(), conversation);
  if (it == visible_.end()) return;
  const QModelIndex index = this->index(static_cast<int>(it - visible_.begin()));
  emit dataChanged(index, index);
}

}  // namespace kiln::gui
