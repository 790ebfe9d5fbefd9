// Choosing a model where it lies on disk: a path field to type or paste into, the folders and
// .gguf files under it, and "Open" for the folder being shown. A Hugging Face folder is opened
// from inside it, the way people look for it (the platform's folder dialog only took a folder
// selected from its parent, and typing a path needed an unmentioned Ctrl+L).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Qt.labs.folderlistmodel
import Kiln
import Kiln.Ui

Popup {
    id: picker
    required property ModelLibrary library
    property string folder: library.userModelsDir
    readonly property bool folderIsModel: picker.library.looksLikeModel(folder)
    property string problem
    signal chosen(string path)

    modal: true
    focus: true
    anchors.centerIn: Overlay.overlay
    width: Math.min(680, parent ? parent.width - 80 : 680)
    height: Math.min(520, parent ? parent.height - 80 : 520)
    padding: 20

    function parentOf(path: string): string {
        const cut = path.replace(/\/+$/, "").lastIndexOf("/")
        return cut > 0 ? path.substring(0, cut) : "/"
    }
    // A typed path: a model (folder or .gguf) opens at once; another folder is shown.
    function openTyped(typed: string) {
        const path = FilePlaces.expand(typed)
        problem = ""
        if (path.length === 0)
            return
        if (picker.library.looksLikeModel(path)) {
            choose(path)  // typed out in full: no need to confirm it again
        } else if (FilePlaces.isFolder(path)) {
            folder = path
        } else {
            problem = qsTr("%1: no such folder, and not a .gguf file").arg(path)
        }
    }
    function choose(path: string) {
        chosen(path)
        close()
    }

    onOpened: {
        if (!FilePlaces.isFolder(folder))
            folder = FilePlaces.home()
        pathField.text = folder
        pathField.forceActiveFocus()
    }
    onFolderChanged: pathField.text = folder

    background: Rectangle {
        radius: Theme.radius
        color: Theme.surface
        border.color: Theme.border
    }

    FolderListModel {
        id: listing
        folder: "file://" + picker.folder
        showDirsFirst: true
        showHidden: false
        showDotAndDotDot: false
        nameFilters: ["*.gguf", "*.GGUF"]
        sortCaseSensitive: false
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label {
            text: qsTr("Open a model")
            font.pixelSize: Theme.fontTitle
            font.weight: Font.DemiBold
            color: Theme.text
        }
        Label {
            text: qsTr("Type or paste a path, or browse. A Hugging Face model is a folder with config.json: open it, then choose “Open this folder”. A .gguf file opens with a click.")
            color: Theme.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        RowLayout {
            Layout.fillWidth: true
            spacing: Theme.gap
            IconButton {
                iconName: "chevron"
                rotation: 180
                tip: qsTr("Up one folder")
                enabled: picker.folder !== "/"
                onClicked: picker.folder = picker.parentOf(picker.folder)
            }
            InputField {
                id: pathField
                objectName: "pickerPath"
                Layout.fillWidth: true
                placeholderText: qsTr("A folder or .gguf file, e.g. ~/models/gemma-3-1b-it")
                onAccepted: picker.openTyped(text)
            }
            PlainButton {
                text: qsTr("Go")
                onClicked: picker.openTyped(pathField.text)
            }
        }
        Label {
            visible: picker.problem.length > 0
            text: picker.problem
            color: Theme.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        Rectangle {
            Layout.fillWidth: true
            Layout.fillHeight: true
            radius: Theme.radiusSmall
            color: Theme.surfaceAlt
            border.color: Theme.border
            ListView {
                id: entries
                objectName: "pickerEntries"
                anchors.fill: parent
                anchors.margins: 4
                clip: true
                model: listing
                ScrollBar.vertical: ScrollBar {}
                delegate: ItemDelegate {
                    id: entry
                    required property string fileName
                    required property string filePath
                    required property bool fileIsDir
                    readonly property bool isModel: fileIsDir && picker.library.looksLikeModel(filePath)
                    width: ListView.view.width
                    implicitHeight: 32
                    hoverEnabled: true
                    background: Rectangle {
                        radius: Theme.radiusSmall
                        color: entry.hovered ? Theme.hover : "transparent"
                    }
                    contentItem: RowLayout {
                        spacing: 8
                        Icon {
                            name: entry.fileIsDir ? "folder" : "file"
                            color: Theme.textMuted
                            Layout.preferredWidth: 16
                            Layout.preferredHeight: 16
                        }
                        Label {
                            text: entry.fileName
                            color: Theme.text
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: entry.isModel || !entry.fileIsDir
                            text: qsTr("model")
                            color: Theme.accent
                            font.pixelSize: Theme.fontSmall
                        }
                    }
                    // A folder opens (a model folder too: it is opened from inside); a file is chosen.
                    onClicked: entry.fileIsDir ? picker.folder = entry.filePath : picker.choose(entry.filePath)
                }
                Label {
                    anchors.centerIn: parent
                    visible: entries.count === 0
                    text: qsTr("No folders or .gguf files here.")
                    color: Theme.textMuted
                }
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: Theme.gap
            Label {
                objectName: "pickerStatus"
                text: picker.folderIsModel ? qsTr("This folder holds a model.")
                                           : qsTr("No model in this folder (no config.json).")
                color: picker.folderIsModel ? Theme.success : Theme.textMuted
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            PlainButton {
                text: qsTr("Cancel")
                onClicked: picker.close()
            }
            AccentButton {
                objectName: "pickerOpen"
                text: qsTr("Open this folder")
                enabled: picker.folderIsModel
                onClicked: picker.choose(picker.folder)
            }
        }
    }
}
