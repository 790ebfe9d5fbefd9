#include "conversation_branches.h"

#include <algorithm>

namespace kiln::gui {

std::vector<std::vector<Message>> versionsAt(const QList<Message>& messages, int row) {
  if (row < 0 || row >= messages.size()) return {};
  const Message& head = messages.at(row);
  std::vector<std::vector<Message>> versions = head.others;
  std::vector<Message> shown(messages.begin() + row, messages.end());
  shown.front().others.clear();
  shown.front().variant = 0;
  const int at = std::clamp(head.variant, 0, static_cast<int>(versions.size()));
  versions.insert(versions.begin() + at, std::move(shown));
  return versions;
}

Message asNewVersion(const QList<Message>& messages, int row, Message fresh) {
  fresh.others = versionsAt(messages, row);
  fresh.variant = static_cast<int>(fresh.others.size());
  return fresh;
}

QList<Message> switchedTail(const QList<Message>& messages, int row, int target) {
  std::vector<std::vector<Message>> versions = versionsAt(messages, row);
  if (target < 0 || target >= static_cast<int>(versions.size())) return {};
  std::vector<Message> chosen = std::move(versions[static_cast<size_t>(target)]);
  versions.erase(versions.begin() + target);
  QList<Message> tail(chosen.begin(), chosen.end());
  tail.front().others = std::move(versions);
  tail.front().variant = target;
  return tail;
}

}  // namespace kiln::gui
