// The side list of conversations: newest first, narrowed by the search field (title or any
// message). A view over the chat controller's conversations; changed only on the GUI thread.
#pragma once

#include <QAbstractListModel>
#include <QQmlEngine>
#include <memory>
#include <vector>

#include "conversation.h"

namespace kiln::gui {

// Markdown as the words a reader sees: no headings' #, list marks, quote marks, emphasis, code
// fences, link targets or table rules. For previews, not for display.
QString plainTextOf(const QString& markdown);

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by ChatController")
  Q_PROPERTY(QString searchText READ searchText WRITE setSearchText NOTIFY searchTextChanged)
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Roles { IdRole = Qt::UserRole + 1, TitleRole, PreviewRole, UpdatedRole, MessageCountRole };

  using Source = std::vector<std::unique_ptr<Conversation>>;
  explicit ConversationListModel(const Source& source, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString searchText() const { return searchText_; }
  void setSearchText(const QString& text);

  Q_INVOKABLE int indexOf(const QString& id) const;
  Q_INVOKABLE QString idAt(int row) const;

  // Call after conversations were added, removed or changed: re-sorts and re-filters.
  void refresh();
  // A title or message changed without changing the order: repaint that row only.
  void updated(const Conversation* conversation);

 signals:
  void searchTextChanged();
  void countChanged();

 private:
  bool matches(const Conversation& conversation) const;

  const Source& source_;
  std::vector<const Conversation*> visible_;  // sorted by updated, newest first
  QString searchText_;
};

}  // namespace kiln::gui
