// Load the chosen model: precision (with the memory each takes), progress, cancel, unload.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Card {
    id: panel
    required property EngineController engine
    required property AppSettings settings
    property string path
    property var info: ({})
    property string inspectError
    signal loadRequested()
    signal chatRequested()

    readonly property bool isLoaded: engine.modelLoaded && engine.modelInfo.path === path
    readonly property bool isLoading: engine.loading && engine.loadingPath === path
    readonly property bool needsReload: isLoaded && engine.loadedSignature !== settings.loadSignature
    readonly property bool gguf: info.sourceFormat === "gguf"
    readonly property var precisions: [
        { value: "auto", label: qsTr("As stored"), bytes: gguf ? (info.bytesAsStored || 0) : (info.bytesInt8 || 0),
          note: gguf ? qsTr("The file's own quantization: %1").arg(info.storedTypes || "")
                     : qsTr("INT8: a Hugging Face folder stores no quantization") },
        { value: "fp32", label: "FP32", bytes: info.bytesFp32 || 0, note: qsTr("The exact reference, twice the memory of FP16") },
        { value: "fp16", label: "FP16", bytes: info.bytesFp16 || 0, note: qsTr("Full quality, twice the memory of INT8") },
        { value: "int8", label: "INT8", bytes: info.bytesInt8 || 0, note: qsTr("Close to FP16, half its size") },
        { value: "int4", label: "INT4", bytes: info.bytesInt4 || 0, note: qsTr("Smallest and fastest; some quality lost") }
    ]
    readonly property real largest: precisions.reduce((m, p) => Math.max(m, p.bytes), 1)

    function stageName(stage) {
        switch (stage) {
        case "reading": return qsTr("Reading weights")
        case "quantizing": return qsTr("Quantizing")
        case "uploading": return qsTr("Uploading to the GPU")
        case "ready": return qsTr("Ready")
        default: return stage
        }
    }

    title: path.length > 0 ? (info.name || path.split("/").pop()) : qsTr("No model chosen")
    subtitle: path.length > 0 ? path : qsTr("Pick one from the library, or open a folder or file.")

    // A load error shows on the model that failed only; the model loaded before it stays.
    // (With no model chosen and none loaded, the panel stands for the one that failed at start.)
    readonly property bool loadFailedHere: !engine.loading && engine.lastError.length > 0
                                           && (engine.failedPath === path || (path.length === 0 && !engine.modelLoaded))
    Banner {
        objectName: "loadError"
        Layout.fillWidth: true
        kind: "error"
        closable: false
        text: panel.inspectError.length > 0 ? panel.inspectError
              : !panel.loadFailedHere ? ""
              : panel.engine.modelLoaded ? qsTr("%1 (%2 is still loaded and answers as before.)").arg(panel.engine.lastError).arg(panel.engine.modelInfo.name)
              : panel.engine.lastError
    }

    // Precision, with what each one takes.
    ColumnLayout {
        visible: panel.path.length > 0
        spacing: 10
        Layout.fillWidth: true
        Label {
            text: qsTr("Precision")
            font.weight: Font.DemiBold
            color: Theme.text
        }
        SegmentedChoice {
            objectName: "precisionChoice"
            options: panel.precisions
            value: panel.settings.precision
            onChosen: value => panel.settings.precision = value
        }
        Repeater {
            model: panel.precisions
            delegate: RowLayout {
                required property var modelData
                readonly property bool chosen: modelData.value === panel.settings.precision
                spacing: 10
                Layout.fillWidth: true
                Label {
                    text: modelData.label
                    font.pixelSize: Theme.fontSmall
                    font.weight: chosen ? Font.DemiBold : Font.Normal
                    color: chosen ? Theme.accent : Theme.textMuted
                    Layout.preferredWidth: 40
                }
                Rectangle {
                    Layout.fillWidth: true
                    implicitHeight: 8
                    radius: 4
                    color: Theme.surfaceAlt
                    Rectangle {
                        width: parent.width * modelData.bytes / panel.largest
                        height: parent.height
                        radius: 4
                        color: chosen ? Theme.accent : Theme.textFaint
                    }
                }
                Label {
                    text: modelData.bytes > 0 ? Format.bytes(modelData.bytes) : "—"
                    font.pixelSize: Theme.fontSmall
                    color: Theme.text
                    horizontalAlignment: Text.AlignRight
                    Layout.preferredWidth: 80
                }
                Label {
                    text: modelData.note
                    font.pixelSize: Theme.fontSmall
                    color: Theme.textMuted
                    elide: Text.ElideRight
                    Layout.preferredWidth: 260
                }
            }
        }
        Label {
            text: qsTr("Weights only; the context cache comes on top. Backend: %1. Change it in Settings.")
                  .arg(panel.settings.backend === "auto" ? qsTr("automatic") : panel.settings.backend === "cpu" ? qsTr("CPU") : qsTr("Vulkan"))
            font.pixelSize: Theme.fontSmall
            color: Theme.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }

    // Progress while loading.
    ColumnLayout {
        visible: panel.isLoading
        spacing: 6
        Layout.fillWidth: true
        RowLayout {
            Layout.fillWidth: true
            Label {
                objectName: "loadStage"
                text: panel.stageName(panel.engine.loadStage)
                color: Theme.text
                Layout.fillWidth: true
            }
            Label {
                text: Math.round(panel.engine.loadFraction * 100) + " %"
                color: Theme.textMuted
            }
        }
        ProgressBar {
            id: progress
            objectName: "loadProgress"
            Layout.fillWidth: true
            value: panel.engine.loadFraction
            background: Rectangle {
                implicitHeight: 8
                radius: 4
                color: Theme.surfaceAlt
            }
            contentItem: Item {
                Rectangle {
                    width: progress.visualPosition * parent.width
                    height: parent.height
                    radius: 4
                    color: Theme.accent
                }
            }
        }
    }

    RowLayout {
        visible: panel.path.length > 0
        spacing: Theme.gap
        AccentButton {
            objectName: "loadButton"
            visible: !panel.isLoading && (!panel.isLoaded || panel.needsReload)
            text: panel.needsReload ? qsTr("Reload with these settings") : qsTr("Load")
            enabled: panel.inspectError.length === 0
            onClicked: panel.loadRequested()
        }
        PlainButton {
            visible: panel.isLoading
            text: qsTr("Cancel")
            onClicked: panel.engine.cancelLoad()
        }
        AccentButton {
            visible: panel.isLoaded && !panel.needsReload
            text: qsTr("Start chatting")
            iconName: "chat"
            onClicked: panel.chatRequested()
        }
        PlainButton {
            objectName: "unloadButton"
            visible: panel.isLoaded
            text: qsTr("Unload")
            iconName: "unload"
            onClicked: panel.engine.unload()
        }
        Label {
            visible: panel.isLoaded
            text: qsTr("Loaded: %1, %2 of weights").arg(String(panel.engine.modelInfo.precision).toUpperCase())
                  .arg(Format.bytes(panel.engine.modelInfo.weightBytes || 0))
            color: Theme.success
            font.pixelSize: Theme.fontSmall
        }
    }
}
