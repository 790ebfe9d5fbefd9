// The Models page's picker (ModelFolderPicker.qml) with the real Kiln module, offscreen: a typed
// path opens a model at once, a folder is shown and a model folder is opened from inside it (the
// platform dialog only took it from its parent), and a typo is said so.
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>
#include <functional>
#include <memory>

#include "file_places.h"

Q_IMPORT_QML_PLUGIN(KilnPlugin)
Q_IMPORT_QML_PLUGIN(Kiln_UiPlugin)

namespace {

// A folder that looks like a Hugging Face model to the app (config.json), under `parent`.
QString makeModelFolder(const QString& parent, const QString& name) {
  const QString folder = parent + "/" + name;
  QDir().mkpath(folder);
  QFile config(folder + "/config.json");
  if (config.open(QIODevice::WriteOnly)) config.write("{}");
  return folder;
}

}  // namespace

class TestModelFolderPicker : public QObject {
  Q_OBJECT

  QTemporaryDir home_;  // settings and library read here, never the user's
  std::unique_ptr<QQmlEngine> engine_;
  std::unique_ptr<QObject> window_;
  QObject* picker_ = nullptr;

  // An item of the picker by objectName (a popup's items live under its contentItem).
  QQuickItem* item(const QString& name) {
    std::function<QQuickItem*(QQuickItem*)> find = [&](QQuickItem* at) -> QQuickItem* {
      if (!at || at->objectName() == name) return at;
      for (QQuickItem* child : at->childItems())
        if (QQuickItem* found = find(child)) return found;
      return nullptr;
    };
    return find(picker_->property("contentItem").value<QQuickItem*>());
  }

  // What pressing Enter in the path field does with `typed`.
  void type(const QString& typed) { QVERIFY(QMetaObject::invokeMethod(picker_, "openTyped", Q_ARG(QString, typed))); }

 private slots:
  void initTestCase() {
    qputenv("XDG_DATA_HOME", (home_.path() + "/data").toUtf8());
    qputenv("XDG_CONFIG_HOME", (home_.path() + "/config").toUtf8());
    QQuickStyle::setStyle(QStringLiteral("Basic"));
    engine_ = std::make_unique<QQmlEngine>();
    engine_->addImportPath(QStringLiteral("qrc:/"));
    QQmlComponent component(engine_.get());
    component.setData(R"(
        import QtQuick
        import Kiln
        Window {
            width: 900; height: 700; visible: true
            property alias picker: picker
            AppSettings { id: settings }
            ModelLibrary { id: library; settings: settings }
            ModelFolderPicker { id: picker; library: library }
        })", QUrl());
    window_.reset(component.create());
    QVERIFY2(window_, qPrintable(component.errorString()));
    picker_ = window_->property("picker").value<QObject*>();
    QVERIFY(picker_);
  }

  void aTypedModelPathOpensAtOnce() {
    QTemporaryDir dir;
    const QString model = makeModelFolder(dir.path(), "gemma-3-1b-it");
    QSignalSpy chosen(picker_, SIGNAL(chosen(QString)));
    QMetaObject::invokeMethod(picker_, "open");
    type(model + "/");  // as pasted, with a trailing slash
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(chosen.first().first().toString(), model);
  }

  // Browsing: into the parent, then into the model folder, then "Open this folder" takes it.
  void aModelFolderIsOpenedFromInside() {
    QTemporaryDir dir;
    const QString model = makeModelFolder(dir.path(), "gemma-3-4b-it");
    QMetaObject::invokeMethod(picker_, "open");
    type(dir.path());
    QCOMPARE(picker_->property("folder").toString(), dir.path());
    QCOMPARE(picker_->property("folderIsModel").toBool(), false);
    QQuickItem* entries = item(QStringLiteral("pickerEntries"));
    QVERIFY(entries);
    QTRY_COMPARE(entries->property("count").toInt(), 1);  // the model folder, listed to be opened
    picker_->setProperty("folder", model);  // what clicking the folder's row does
    QVERIFY(picker_->property("folderIsModel").toBool());
    QSignalSpy chosen(picker_, SIGNAL(chosen(QString)));
    QQuickItem* open = item(QStringLiteral("pickerOpen"));
    QVERIFY(open);
    QVERIFY(open->isEnabled());
    QMetaObject::invokeMethod(open, "clicked");
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(chosen.first().first().toString(), model);
  }

  void aTypoIsSaidSo() {
    QMetaObject::invokeMethod(picker_, "open");
    QSignalSpy chosen(picker_, SIGNAL(chosen(QString)));
    type("/no/such/folder");
    QVERIFY(chosen.isEmpty());
    QVERIFY2(picker_->property("problem").toString().contains("/no/such/folder"), qPrintable(picker_->property("problem").toString()));
  }

  void cleanupTestCase() {
    window_.reset();
    engine_.reset();
  }

  void typedPathsAreExpanded() {
    using kiln::gui::FilePlaces;
    QCOMPARE(FilePlaces::expand(" ~/models/x/ "), QDir::homePath() + "/models/x");
    QCOMPARE(FilePlaces::expand("file:///tmp/a%20b"), QStringLiteral("/tmp/a b"));
    QCOMPARE(FilePlaces::expand(""), QString());
  }
};

QTEST_MAIN(TestModelFolderPicker)
#include "test_model_folder_picker.moc"
