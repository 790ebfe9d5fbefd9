// ConversationStore: what is saved comes back; a leftover of an interrupted save and damaged
// files never cost the other conversations.
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "conversation_store.h"

using namespace kiln::gui;

namespace {

Conversation sample(const QString& title) {
  Conversation c;
  c.id = ConversationStore::newId();
  c.title = title;
  c.systemPrompt = "Antworte auf Deutsch.";
  c.created = QDateTime(QDate(2026, 11, 1), QTime(9, 30, 0, 125), Qt::UTC);
  c.updated = c.created.addSecs(90);
  Message q;
  q.text = "Grüße — 日本語 — 🙂\nzweite Zeile";
  Message a;
  a.role = Message::Role::Assistant;
  a.text = "```cpp\nint main() {}\n```";
  a.hasStats = true;
  a.stats = {12, 34, 56.5, 78.25, 900, "end_of_turn", {"NPU attention fell back to the CPU: device lost"}};
  Message stopped;
  stopped.role = Message::Role::Assistant;
  stopped.text = "half an answ";
  stopped.error = "the engine failed";
  c.messages = {q, a, stopped};
  return c;
}

void write(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

}  // namespace

class TestConversationStore : public QObject {
  Q_OBJECT

 private slots:
  void whatIsSavedComesBack() {
    QTemporaryDir dir;
    ConversationStore store(dir.path() + "/conversations");  // created on first save
    const Conversation original = sample("Unicode & code");
    QCOMPARE(store.save(original), QString());

    const auto loaded = store.loadAll();
    QVERIFY(loaded.errors.isEmpty());
    QCOMPARE(loaded.conversations.size(), 1);
    const Conversation& c = loaded.conversations.first();
    QCOMPARE(c.id, original.id);
    QCOMPARE(c.title, original.title);
    QCOMPARE(c.systemPrompt, original.systemPrompt);
    QCOMPARE(c.created, original.created);
    QCOMPARE(c.updated, original.updated);
    QCOMPARE(c.messages.size(), 3);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(c.messages[i].role, original.messages[i].role);
      QCOMPARE(c.messages[i].text, original.messages[i].text);
      QCOMPARE(c.messages[i].hasStats, original.messages[i].hasStats);
      QCOMPARE(c.messages[i].error, original.messages[i].error);
    }
    QCOMPARE(c.messages[1].stats.generatedTokens, 34);
    QCOMPARE(c.messages[1].stats.timeToFirstTokenMs, 56.5);
    QCOMPARE(c.messages[1].stats.tokensPerSecond, 78.25);
    QCOMPARE(c.messages[1].stats.stopReason, QStringLiteral("end_of_turn"));
    QCOMPARE(c.messages[1].stats.notes, QStringList{"NPU attention fell back to the CPU: device lost"});  // shown under the stats
  }

  void savingAgainReplacesTheWholeFile() {
    QTemporaryDir dir;
    ConversationStore store(dir.path());
    Conversation c = sample("long");
    c.messages[0].text = QString(5000, QLatin1Char('x'));
    QCOMPARE(store.save(c), QString());
    c.messages.resize(1);
    c.messages[0].text = "short";
    QCOMPARE(store.save(c), QString());
    const auto loaded = store.loadAll();
    QCOMPARE(loaded.conversations.size(), 1);
    QCOMPARE(loaded.conversations.first().messages.size(), 1);
    QCOMPARE(loaded.conversations.first().messages.first().text, QStringLiteral("short"));
    // Only the conversation's own file is left: no temporaries from the atomic writes.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{c.id + ".json"});
  }

  void aKilledSaveLeavesThePreviousVersion() {
    // QSaveFile writes "<name>.json.XXXXXX" and renames it over the file at commit; a process
    // killed before the rename leaves that temporary beside the intact previous version.
    QTemporaryDir dir;
    ConversationStore store(dir.path());
    const Conversation c = sample("kept");
    QCOMPARE(store.save(c), QString());
    write(store.pathFor(c.id) + ".aBc123", "{\"format\": \"kiln-conversation\", \"messages\": [{\"ro");
    const auto loaded = store.loadAll();
    QVERIFY(loaded.errors.isEmpty());
    QCOMPARE(loaded.conversations.size(), 1);
    QCOMPARE(loaded.conversations.first().title, QStringLiteral("kept"));
  }

  void damagedFilesAreNamedAndSkipped() {
    QTemporaryDir dir;
    ConversationStore store(dir.path());
    const Conversation good = sample("good");
    QCOMPARE(store.save(good), QString());
    write(dir.filePath("truncated.json"), "{\"format\": \"kiln-conversation\", \"messages\": [");
    write(dir.filePath("array.json"), "[1, 2, 3]");
    write(dir.filePath("other.json"), "{\"name\": \"not ours\"}");
    write(dir.filePath("badrole.json"),
          "{\"format\": \"kiln-conversation\", \"version\": 1, \"messages\": [{\"role\": \"robot\", \"text\": \"hi\"}]}");
    write(dir.filePath("future.json"), "{\"format\": \"kiln-conversation\", \"version\": 99, \"messages\": []}");
    QFile huge(dir.filePath("huge.json"));
    QVERIFY(huge.open(QIODevice::WriteOnly));
    QVERIFY(huge.resize(ConversationStore::kMaxFileBytes + 1));  // sparse: never read into memory
    huge.close();

    const auto loaded = store.loadAll();
    QCOMPARE(loaded.conversations.size(), 1);
    QCOMPARE(loaded.conversations.first().id, good.id);
    QCOMPARE(loaded.errors.size(), 6);
    const QStringList expected{"truncated.json: not valid JSON", "array.json: not valid JSON (not a JSON object)",
                               "other.json: not a Kiln conversation", "badrole.json: message 1 has an unknown role \"robot\"",
                               "future.json: written by a newer Kiln", "huge.json: larger than 32 MiB"};
    for (const QString& what : expected)
      QVERIFY2(loaded.errors.filter(what).size() == 1, qPrintable(what + " in:\n" + loaded.errors.join('\n')));
    for (const QString& error : loaded.errors) {
      QVERIFY2(error.startsWith(dir.path()), "each error names the file by its path");
      QVERIFY(!error.contains('\n'));
    }
    // The two that are not JSON were moved aside, whole, and are not reported again; the files
    // that are whole JSON stay where they are (a newer Kiln reads future.json).
    QVERIFY(QFile::exists(dir.filePath("truncated.json.corrupt")) && QFile::exists(dir.filePath("array.json.corrupt")));
    QVERIFY(!QFile::exists(dir.filePath("truncated.json")) && QFile::exists(dir.filePath("future.json")));
    QVERIFY(loaded.errors.filter("moved aside to " + dir.filePath("truncated.json.corrupt")).size() == 1);
    const auto again = store.loadAll();
    QCOMPARE(again.errors.size(), 4);
    QCOMPARE(again.errors.filter("not valid JSON").size(), 0);
  }

  // A save killed between writing its temporary and the rename, on a file system where QSaveFile
  // names the temporary: the next start finishes the save when the temporary is whole and newer,
  // and removes it otherwise, so nothing is lost and nothing lingers.
  void anInterruptedSaveIsFinishedOrCleanedUp() {
    QTemporaryDir dir;
    ConversationStore store(dir.path());
    Conversation older = sample("older");
    QCOMPARE(store.save(older), QString());
    Conversation newer = older;
    newer.title = "newer";
    newer.updated = older.updated.addSecs(60);
    QTemporaryDir elsewhere;
    ConversationStore scratch(elsewhere.path());
    QCOMPARE(scratch.save(newer), QString());
    QVERIFY(QFile::copy(scratch.pathFor(newer.id), store.pathFor(older.id) + ".Xy12Zq"));  // whole and newer
    Conversation lost = sample("only in the temporary");
    QCOMPARE(scratch.save(lost), QString());
    QVERIFY(QFile::copy(scratch.pathFor(lost.id), store.pathFor(lost.id) + ".Ab34Cd"));  // its file never made it
    Conversation stale = sample("stale");
    QCOMPARE(store.save(stale), QString());
    Conversation staler = stale;
    staler.title = "staler";
    staler.updated = stale.updated.addSecs(-60);
    QCOMPARE(scratch.save(staler), QString());
    QVERIFY(QFile::copy(scratch.pathFor(staler.id), store.pathFor(stale.id) + ".Ef56Gh"));  // older than its file

    const auto loaded = store.loadAll();
    QVERIFY2(loaded.errors.isEmpty(), qPrintable(loaded.errors.join('\n')));
    QStringList titles;
    for (const Conversation& c : loaded.conversations) titles << c.title;
    titles.sort();
    QCOMPARE(titles, QStringList({"newer", "only in the temporary", "stale"}));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).filter(QRegularExpression("\\.json\\.")).size(), 0);
  }

  void removeDeletesTheFile() {
    QTemporaryDir dir;
    ConversationStore store(dir.path());
    const Conversation c = sample("bye");
    QCOMPARE(store.save(c), QString());
    QCOMPARE(store.remove(c.id), QString());
    QVERIFY(!QFile::exists(store.pathFor(c.id)));
    QCOMPARE(store.remove(c.id), QString());  // already gone is fine
  }

  void unwritableFolderIsReportedNotFatal() {
    QTemporaryDir dir;
    write(dir.filePath("file"), "x");
    ConversationStore store(dir.filePath("file") + "/sub");  // a folder under a file cannot exist
    const QString error = store.save(sample("nowhere"));
    QVERIFY2(error.contains(dir.filePath("file")), qPrintable(error));
  }
};

QTEST_GUILESS_MAIN(TestConversationStore)
#include "test_conversation_store.moc"
