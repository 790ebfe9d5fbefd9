#include "launch_options.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QQuickItem>
#include <QQuickWindow>
#include <cstdio>
#include <functional>

namespace kiln::gui {

LaunchOptions::LaunchOptions(QObject* parent) : QObject(parent) { parse(QCoreApplication::arguments()); }

LaunchOptions::LaunchOptions(const QStringList& arguments, QObject* parent) : QObject(parent) { parse(arguments); }

void LaunchOptions::parse(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption model({"m", "model"}, tr("Model folder or .gguf file to open."), tr("path"));
  const QCommandLineOption prompt("prompt", tr("Send this message once the model is loaded."), tr("text"));
  const QCommandLineOption page("page", tr("Page to show: chat, models, downloads, hardware, profiler, settings."), tr("name"));
  const QCommandLineOption repo("repo", tr("Hugging Face repository (OWNER/REPO) for the Downloads page to list."), tr("repo"));
  const QCommandLineOption screenshot("screenshot", tr("Save a PNG of the window when done."), tr("file"));
  const QCommandLineOption theme("theme", tr("light or dark (this run only)."), tr("theme"));
  const QCommandLineOption language("language", tr("en or de (this run only)."), tr("code"));
  const QCommandLineOption download("download", tr("Download what the Downloads page suggests for --repo."));
  const QCommandLineOption regenerate("regenerate", tr("Regenerate the answer to --prompt once, so both versions are kept."));
  const QCommandLineOption quit("quit", tr("Quit after the prompt was answered and the screenshot saved."));
  parser.addOptions({model, prompt, page, repo, download, regenerate, screenshot, theme, language, quit});
  parser.process(arguments);  // exits with a message on --help or an unknown option
  modelPath_ = parser.value(model);
  prompt_ = parser.value(prompt);
  page_ = parser.value(page);
  repo_ = parser.value(repo);
  downloadRepo_ = parser.isSet(download);
  regenerate_ = parser.isSet(regenerate);
  screenshot_ = parser.value(screenshot);
  theme_ = parser.value(theme);
  language_ = parser.value(language);
  quitWhenDone_ = parser.isSet(quit);
}

bool LaunchOptions::saveScreenshot(QObject* window, const QString& path) const {
  auto* quickWindow = qobject_cast<QQuickWindow*>(window);
  if (!quickWindow) return false;
  const QImage image = quickWindow->grabWindow();
  return !image.isNull() && image.save(path, "PNG");
}

QStringList LaunchOptions::visibleTexts(QQuickItem* root) const {
  QStringList texts;
  if (!root || !root->window()) return texts;
  const QRectF windowRect(QPointF(0, 0), root->window()->size());
  std::function<void(QQuickItem*)> walk = [&](QQuickItem* item) {
    if (!item->isVisible() || item->opacity() <= 0) return;
    const bool rendersText = item->inherits("QQuickText") || item->inherits("QQuickTextEdit") || item->inherits("QQuickTextInput");
    QVariant text = rendersText ? item->property("text") : QVariant();
    // Text editors hold rich text: read what is shown (plain), not their Markdown/HTML source.
    const QVariant length = item->property("length");
    if (rendersText && length.isValid() && item->metaObject()->indexOfMethod("getText(int,int)") >= 0) {
      QString plain;
      QMetaObject::invokeMethod(item, "getText", Q_RETURN_ARG(QString, plain), Q_ARG(int, 0), Q_ARG(int, length.toInt()));
      text = plain;
    }
    if (text.typeId() == QMetaType::QString && !text.toString().isEmpty()) {
      const QRectF onWindow = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
      if (onWindow.intersects(windowRect)) texts << text.toString();
    }
    for (QQuickItem* child : item->childItems()) walk(child);
  };
  walk(root);
  return texts;
}

void LaunchOptions::report(const QString& line) const {
  std::fprintf(stdout, "%s\n", line.toUtf8().constData());
  std::fflush(stdout);
}

}  // namespace kiln::gui
