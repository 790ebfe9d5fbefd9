// Choose a model, see its facts and what each precision would cost, load it, unload it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property EngineController engine
    required property ModelLibrary library
    required property AppSettings settings
    required property RemoteEndpoints remoteEndpoints
    signal loadRequested(string path)
    signal chatRequested()
    signal downloadsRequested()

    // The model whose facts are shown: the one clicked, else the one loaded (a remote one has no files here).
    property string selectedPath: engine.modelLoaded && !engine.remote ? engine.modelInfo.path : ""
    property var selectedInfo: ({})
    property string inspectError

    function select(path) {
        selectedInfo = ({})
        inspectError = ""
        selectedPath = path
    }
    // Facts come from the model's files (config and headers), read on the engine's thread.
    onSelectedPathChanged: if (selectedPath.length > 0 && selectedInfo.path !== selectedPath) engine.inspect(selectedPath)

    Connections {
        target: page.engine
        function onInspected(path, info) { if (path === page.selectedPath) page.selectedInfo = info }
        function onInspectFailed(path, message) { if (path === page.selectedPath) page.inspectError = message }
        function onLoaded(info) { page.library.refresh() }
    }

    ModelFolderPicker {
        id: folderPicker
        objectName: "folderPicker"
        library: page.library
        onChosen: path => page.select(path)
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 20

            PageHeader {
                Layout.fillWidth: true
                Layout.topMargin: Theme.pagePadding
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Models")
                subtitle: qsTr("Open a Gemma 3 model — a Hugging Face folder or a .gguf file — and choose how it is held in memory.")
            }

            RowLayout {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                Layout.bottomMargin: Theme.pagePadding
                spacing: 20

                ColumnLayout {
                    Layout.preferredWidth: 360
                    Layout.maximumWidth: 360
                    Layout.alignment: Qt.AlignTop
                    spacing: 20

                    // The library.
                    Card {
                        title: qsTr("Library")
                        subtitle: qsTr("Bundled, downloaded on the Downloads page into %1, found in the Hugging Face cache, and recently opened.").arg(page.library.userModelsDir)
                        Layout.fillWidth: true

                        RowLayout {
                            spacing: Theme.gap
                            PlainButton {
                                objectName: "openFolderButton"
                                text: qsTr("Open folder…")
                                iconName: "folder"
                                onClicked: folderPicker.open()
                            }
                            PlainButton {
                                text: qsTr("Open file…")
                                iconName: "file"
                                onClicked: folderPicker.open()  // it lists .gguf files and takes a typed path
                            }
                        }
                        Repeater {
                            model: page.library
                            delegate: ModelListItem {
                                required property var model
                                Layout.fillWidth: true
                                name: model.name
                                path: model.path
                                kind: model.kind
                                exists: model.exists
                                selected: model.path === page.selectedPath
                                loaded: page.engine.modelLoaded && page.engine.modelInfo.path === model.path
                                onClicked: page.select(model.path)
                                onForgetRequested: page.settings.removeRecentModel(model.path)
                            }
                        }
                        Label {
                            visible: page.library.count === 0
                            text: qsTr("No models yet. Open a folder or a file, or download one on the Downloads page.")
                            color: Theme.textMuted
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                        PlainButton {
                            objectName: "openDownloadsButton"
                            text: qsTr("Downloads page")
                            iconName: "download"
                            onClicked: page.downloadsRequested()
                        }
                    }

                    RemoteEndpointsCard {
                        objectName: "remoteEndpointsCard"
                        Layout.fillWidth: true
                        engine: page.engine
                        endpoints: page.remoteEndpoints
                        onChatRequested: page.chatRequested()
                    }
                }

                ColumnLayout {
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    spacing: 20

                    LoadPanel {
                        Layout.fillWidth: true
                        engine: page.engine
                        settings: page.settings
                        path: page.selectedPath
                        info: page.selectedInfo
                        inspectError: page.inspectError
                        onLoadRequested: page.loadRequested(page.selectedPath)
                        onChatRequested: page.chatRequested()
                    }
                    ModelFactsCard {
                        Layout.fillWidth: true
                        visible: page.selectedInfo.path !== undefined
                        info: page.engine.modelLoaded && page.engine.modelInfo.path === page.selectedPath
                              ? page.engine.modelInfo : page.selectedInfo
                    }
                }
            }
        }
    }
}
