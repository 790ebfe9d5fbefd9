// What the app's engine-driven tests share: the fixture model, a private data and settings
// folder, loading a model through the EngineController the way the app does, and a chat on it.
#pragma once

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "app_settings.h"
#include "chat_controller.h"
#include "engine_controller.h"

namespace kiln::gui::test {

inline QString fixtureModel() { return QStringLiteral(KILN_TEST_DATA "/fixtures/tiny-gemma3-a"); }

// Points QStandardPaths and QSettings at `dir` (the XDG variables they read on Linux), so a test
// never reads or writes the user's conversations or settings.
inline void useScratchHome(const QTemporaryDir& dir) {
  qputenv("XDG_DATA_HOME", (dir.path() + "/data").toUtf8());
  qputenv("XDG_CONFIG_HOME", (dir.path() + "/config").toUtf8());
}

// Loads the fixture and waits; returns false (after QFAIL-style messages) when it did not load.
// context 4096 is the fixture's maximum: room for answers long enough to be stopped midway.
// loadModel: the same for another model folder (e.g. a copy of the fixture with other files).
inline bool loadModel(EngineController& engine, const QString& path, int context = 256,
                      const QString& precision = QStringLiteral("fp16")) {
  QSignalSpy loaded(&engine, &EngineController::loaded);
  QSignalSpy failed(&engine, &EngineController::loadFailed);
  engine.load(path, precision, QStringLiteral("cpu"), QStringLiteral("auto"), context, 1);
  if (!QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 30000)) {
    qWarning("the fixture did not load within 30 s");
    return false;
  }
  if (!failed.isEmpty()) qWarning("load failed: %s", qPrintable(failed.first().first().toString()));
  return !loaded.isEmpty();
}

inline bool loadFixture(EngineController& engine, int context = 256, const QString& precision = QStringLiteral("fp16")) {
  return loadModel(engine, fixtureModel(), context, precision);
}

// A chat as the app wires it: conversations saved in `folder`, answers from `engine` with `settings`.
inline std::unique_ptr<ChatController> chatOn(EngineController& engine, AppSettings& settings, const QString& folder) {
  auto chat = std::make_unique<ChatController>(folder, nullptr);
  chat->setEngine(&engine);
  chat->setSettings(&settings);
  return chat;
}

}  // namespace kiln::gui::test
