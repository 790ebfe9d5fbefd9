#include "message_list_model.h"

#include <QUrl>

namespace kiln::gui {

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}

int MessageListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !conversation_ ? 0 : static_cast<int>(conversation_->messages.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Message& m = conversation_->messages.at(index.row());
  switch (role) {
    case RoleRole: return m.role == Message::Role::User ? QStringLiteral("user") : QStringLiteral("assistant");
    case TextRole: return m.text;
    case StreamingRole: return m.streaming;
    case HasStatsRole: return m.hasStats;
    case GeneratedTokensRole: return m.stats.generatedTokens;
    case TimeToFirstTokenRole: return m.stats.timeToFirstTokenMs;
    case TokensPerSecondRole: return m.stats.tokensPerSecond;
    case StopReasonRole: return m.stats.stopReason;
    case ErrorRole: return m.error;
    case NotesRole: return m.stats.notes;
    case VariantRole: return m.variant + 1;
    case VariantCountRole: return m.variantCount();
    case RolledOffRole: return m.stats.rolledOff;
    case ImagesRole: {
      QStringList urls;
      for (const MessageImage& image : m.images)
        urls << QUrl::fromLocalFile(imageDirectory_ + QLatin1Char('/') + image.file).toString();
      return urls;
    }
    case ImageNamesRole: {
      QStringList names;
      for (const MessageImage& image : m.images) names << image.name;
      return names;
    }
    default: return {};
  }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{RoleRole, "role"},
          {TextRole, "text"},
          {StreamingRole, "streaming"},
          {HasStatsRole, "hasStats"},
          {GeneratedTokensRole, "generatedTokens"},
          {TimeToFirstTokenRole, "timeToFirstTokenMs"},
          {TokensPerSecondRole, "tokensPerSecond"},
          {StopReasonRole, "stopReason"},
          {ErrorRole, "error"},
          {NotesRole, "notes"},
          {VariantRole, "variant"},
          {VariantCountRole, "variantCount"},
          {RolledOffRole, "rolledOff"},
          {ImagesRole, "images"},
          {ImageNamesRole, "imageNames"}};
}

void MessageListModel::setConversation(Conversation* conversation) {
  const int before = rowCount();
  beginResetModel();
  conversation_ = conversation;
  endResetModel();
  if (before != rowCount()) emit countChanged();
}

void MessageListModel::append(const Message& message) {
  if (!conversation_) return;
  const int row = rowCount();
  beginInsertRows({}, row, row);
  conversation_->messages.append(message);
  endInsertRows();
  emit countChanged();
}

void MessageListModel::appendText(int row, const QString& text) {
  if (row < 0 || row >= rowCount()) return;
  conversation_->messages[row].text += text;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {TextRole});
}

void MessageListModel::changed(int row) {
  if (row < 0 || row >= rowCount()) return;
  const QModelIndex i = index(row);
  emit dataChanged(i, i);
}

void MessageListModel::truncate(int fromRow) {
  const int count = rowCount();
  if (fromRow < 0 || fromRow >= count) return;
  beginRemoveRows({}, fromRow, count - 1);
  conversation_->messages.remove(fromRow, count - fromRow);
  endRemoveRows();
  emit countChanged();
}

void MessageListModel::replaceFrom(int fromRow, const QList<Message>& tail) {
  if (!conversation_ || fromRow < 0 || fromRow > rowCount()) return;
  truncate(fromRow);
  if (tail.isEmpty()) return;
  beginInsertRows({}, fromRow, fromRow + static_cast<int>(tail.size()) - 1);
  conversation_->messages.append(tail);
  endInsertRows();
  emit countChanged();
}

QString MessageListModel::textAt(int row) const {
  return row >= 0 && row < rowCount() ? conversation_->messages.at(row).text : QString();
}

}  // namespace kiln::gui
