// The released Gemma 3 models: what each needs at each precision, whether it fits this computer,
// and a way to download it through the Downloads page. Works offline with what Kiln knows.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property ModelCatalogue catalogue
    property var downloads: null  // a DownloadController; null in a build without downloads
    signal openDownloads()

    function precisionName(key) {
        switch (key) {
        case "auto": return qsTr("As stored")
        case "fp32": return "FP32"
        case "fp16": return "FP16"
        case "int8": return "INT8"
        case "int4": return "INT4"
        default: return key
        }
    }

    // The hub is asked once the page is first shown, not at every start.
    onVisibleChanged: if (visible && catalogue.hubState.length === 0) catalogue.refresh()

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 14

            PageHeader {
                Layout.fillWidth: true
                Layout.topMargin: Theme.pagePadding
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Catalogue")
                subtitle: page.catalogue.memoryBytes > 0
                          ? qsTr("The released Gemma 3 models, the memory their weights take, and whether they fit this computer's %1.")
                                .arg(Format.bytes(page.catalogue.memoryBytes))
                          : qsTr("The released Gemma 3 models and the memory their weights take.")
            }
            Banner {
                objectName: "hubBanner"
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: "warning"
                closable: false
                text: page.catalogue.hubState === "unreachable" ? page.catalogue.hubMessage : ""
                actionText: qsTr("Try again")
                onActionTriggered: page.catalogue.refresh()
            }

            Repeater {
                model: page.catalogue
                delegate: Card {
                    id: row
                    required property string name
                    required property string repo
                    required property string note
                    required property double downloadBytes
                    required property bool sizeKnown
                    required property var memory
                    required property var fits
                    Layout.fillWidth: true
                    Layout.leftMargin: Theme.pagePadding
                    Layout.rightMargin: Theme.pagePadding
                    title: name
                    subtitle: repo

                    Label {
                        text: row.note
                        color: Theme.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 8
                        Repeater {
                            model: ["fp32", "fp16", "int8", "int4", "auto"].filter(key => row.memory[key] !== undefined)
                            delegate: Rectangle {
                                required property string modelData
                                readonly property bool fitsHere: row.fits[modelData] === true
                                implicitWidth: chip.implicitWidth + 16
                                implicitHeight: 24
                                radius: 12
                                color: fitsHere ? Qt.rgba(Theme.success.r, Theme.success.g, Theme.success.b, 0.15) : Theme.warningSoft
                                Label {
                                    id: chip
                                    anchors.centerIn: parent
                                    text: (parent.fitsHere ? qsTr("%1: %2, fits") : qsTr("%1: %2, too big"))
                                          .arg(page.precisionName(parent.modelData)).arg(Format.bytes(row.memory[parent.modelData]))
                                    font.pixelSize: Theme.fontSmall
                                    color: parent.fitsHere ? Theme.success : Theme.warning
                                }
                            }
                        }
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            text: (row.sizeKnown ? qsTr("Download: %1") : qsTr("Download: about %1")).arg(Format.bytes(row.downloadBytes))
                            color: Theme.text
                            Layout.fillWidth: true
                        }
                        PlainButton {
                            text: qsTr("Show files…")
                            iconName: "download"
                            enabled: page.downloads !== null && !page.downloads.busy
                            onClicked: {
                                page.downloads.list(row.repo)
                                page.openDownloads()
                            }
                        }
                    }
                }
            }
            Item { implicitHeight: Theme.pagePadding }
        }
    }
}
