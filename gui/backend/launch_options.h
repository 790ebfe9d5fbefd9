// What the command line asked for. Besides --model, these exist so the app can be driven
// headless: a test (or the screenshot script) opens a model, sends a prompt, waits for the
// answer and saves a picture of a page, then quits.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QQuickItem>
#include <QStringList>

namespace kiln::gui {

class LaunchOptions : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QString modelPath READ modelPath CONSTANT)
  Q_PROPERTY(QString prompt READ prompt CONSTANT)
  Q_PROPERTY(QString page READ page CONSTANT)            // chat, models, downloads, hardware, profiler, settings
  Q_PROPERTY(QString repo READ repo CONSTANT)            // OWNER/REPO the Downloads page lists at start
  Q_PROPERTY(bool downloadRepo READ downloadRepo CONSTANT)  // and then downloads what it suggests
  Q_PROPERTY(bool regenerate READ regenerate CONSTANT)   // answer the prompt twice: two versions (‹ 2/2 ›)
  Q_PROPERTY(QString screenshot READ screenshot CONSTANT)  // PNG to write once the app is settled
  Q_PROPERTY(QString theme READ theme CONSTANT)
  Q_PROPERTY(QString language READ language CONSTANT)
  Q_PROPERTY(bool quitWhenDone READ quitWhenDone CONSTANT)
  Q_PROPERTY(bool automated READ automated CONSTANT)

 public:
  explicit LaunchOptions(QObject* parent = nullptr);
  // For tests: parse this argument list instead of the application's.
  explicit LaunchOptions(const QStringList& arguments, QObject* parent = nullptr);

  QString modelPath() const { return modelPath_; }
  QString prompt() const { return prompt_; }
  QString page() const { return page_; }
  QString repo() const { return repo_; }
  bool downloadRepo() const { return downloadRepo_; }
  bool regenerate() const { return regenerate_; }
  QString screenshot() const { return screenshot_; }
  QString theme() const { return theme_; }
  QString language() const { return language_; }
  bool quitWhenDone() const { return quitWhenDone_; }
  bool automated() const { return !prompt_.isEmpty() || !screenshot_.isEmpty(); }

  // Saves what the window shows to `path` (PNG); false when it could not.
  Q_INVOKABLE bool saveScreenshot(QObject* window, const QString& path) const;
  // The text of every visible text item (Text, TextEdit, TextInput) under `root` that lies inside
  // its window, editors as the plain text they show: what a user could read on screen.
  Q_INVOKABLE QStringList visibleTexts(QQuickItem* root) const;
  Q_INVOKABLE void report(const QString& line) const;  // one line on stdout, flushed

 private:
  void parse(const QStringList& arguments);

  QString modelPath_, prompt_, page_, repo_, screenshot_, theme_, language_;
  bool quitWhenDone_ = false;
  bool downloadRepo_ = false;
  bool regenerate_ = false;
};

}  // namespace kiln::gui
