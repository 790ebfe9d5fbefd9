// Branches of a conversation: a regenerated answer or an edited question does not replace the
// old one, it becomes another version of that message, kept with what followed it then.
// Plain functions over a conversation's messages; the chat controller applies their results
// through the message list model so that QML hears every change.
#pragma once

#include <QList>
#include <vector>

#include "conversation.h"

namespace kiln::gui {

// Every version of the message at `row`, the one on screen (with what follows it) in its place.
// Each version starts with its message, whose own `others` are left empty.
std::vector<std::vector<Message>> versionsAt(const QList<Message>& messages, int row);

// `fresh` as the newest version of the message at `row`: it keeps all the versions there.
Message asNewVersion(const QList<Message>& messages, int row, Message fresh);

// The messages from `row` on with version `target` (0-based) of the message at `row` on screen;
// empty when there is no such version.
QList<Message> switchedTail(const QList<Message>& messages, int row, int target);

}  // namespace kiln::gui
