// Where the last answer's time went: per op type, per layer, and tokens/s along the answer.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property ProfileReport report
    required property EngineController engine
    required property AppSettings settings
    property string exportMessage
    property bool exportFailed: false

    FileDialog {
        id: exportDialog
        title: qsTr("Export a Chrome trace")
        fileMode: FileDialog.SaveFile
        acceptLabel: qsTr("Save")
        defaultSuffix: "json"
        nameFilters: [qsTr("Chrome trace (*.json)")]
        onAccepted: {
            const problem = page.report.exportChromeTrace(selectedFile.toString())
            page.exportFailed = problem.length > 0
            page.exportMessage = problem.length > 0 ? problem
                : qsTr("Saved. Open it in ui.perfetto.dev or chrome://tracing.")
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            spacing: 20

            RowLayout {
                Layout.fillWidth: true
                Layout.topMargin: Theme.pagePadding
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                spacing: 16
                PageHeader {
                    Layout.fillWidth: true
                    title: qsTr("Profiler")
                    subtitle: qsTr("Where the time of the last answer went.")
                }
                ToggleSwitch {
                    objectName: "profilingSwitch"
                    text: qsTr("Profile answers")
                    checked: page.settings.profiling
                    onToggled: page.settings.profiling = checked
                }
                PlainButton {
                    text: qsTr("Export trace…")
                    iconName: "export"
                    enabled: page.report.hasGeneration
                    onClicked: {
                        const suggested = page.report.suggestedTraceFile()
                        exportDialog.currentFolder = suggested.toString().replace(/\/[^\/]*$/, "")
                        exportDialog.selectedFile = suggested
                        exportDialog.open()
                    }
                }
            }

            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: page.exportFailed ? "error" : "info"
                text: page.exportMessage
                onClosed: page.exportMessage = ""
            }
            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                kind: "info"
                closable: false
                text: page.report.hasGeneration && !page.report.hasProfile
                      ? qsTr("Profiling was off for this answer. Turn on “Profile answers” and ask again to see per-operation times.") : ""
            }

            EmptyState {
                visible: !page.report.hasGeneration
                Layout.alignment: Qt.AlignHCenter
                Layout.topMargin: 60
                iconName: "profiler"
                title: qsTr("Nothing measured yet")
                text: qsTr("Turn on “Profile answers”, then ask something on the Chat page. The timings of the last answer appear here.")
            }

            // The headline numbers.
            Flow {
                visible: page.report.hasGeneration
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                spacing: 12
                Repeater {
                    model: [
                        { label: qsTr("Prompt"), value: qsTr("%n token(s)", "", page.report.stats.promptTokens || 0) },
                        { label: qsTr("Answer"), value: qsTr("%n token(s)", "", page.report.stats.generatedTokens || 0) },
                        { label: qsTr("First token after"), value: Format.milliseconds(page.report.stats.timeToFirstTokenMs || 0) },
                        { label: qsTr("Prompt reading"), value: qsTr("%1 tok/s").arg(Format.number(page.report.stats.prefillTokensPerSecond || 0, 1)) },
                        { label: qsTr("Writing"), value: qsTr("%1 tok/s").arg(Format.number(page.report.stats.decodeTokensPerSecond || 0, 1)) },
                        { label: qsTr("Total"), value: Format.milliseconds(page.report.stats.totalMs || 0) }
                    ]
                    delegate: Rectangle {
                        required property var modelData
                        width: 150
                        height: 68
                        radius: Theme.radius
                        color: Theme.surface
                        border.color: Theme.border
                        Column {
                            anchors.fill: parent
                            anchors.margins: 12
                            spacing: 4
                            Label {
                                text: modelData.label
                                font.pixelSize: Theme.fontSmall
                                color: Theme.textMuted
                            }
                            Label {
                                text: modelData.value
                                font.pixelSize: Theme.fontTitle
                                font.weight: Font.DemiBold
                                color: Theme.text
                            }
                        }
                    }
                }
            }

            Card {
                visible: page.report.hasGeneration
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Tokens per second along the answer")
                LineChart {
                    Layout.fillWidth: true
                    Layout.preferredHeight: 180
                    unit: qsTr("tok/s")
                    xLabel: qsTr("tokens")
                    points: page.report.tokenRates
                    emptyText: qsTr("Too short an answer to plot")
                }
            }

            RowLayout {
                visible: page.report.hasProfile
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                Layout.bottomMargin: Theme.pagePadding
                spacing: 20
                Card {
                    Layout.fillWidth: true
                    Layout.preferredWidth: 1
                    Layout.alignment: Qt.AlignTop
                    title: qsTr("By operation")
                    subtitle: qsTr("Share of the measured time")
                    ShareBars {
                        objectName: "opShares"
                        Layout.fillWidth: true
                        rows: page.report.opTotals
                        keys: page.report.opNames
                    }
                }
                Card {
                    Layout.fillWidth: true
                    Layout.preferredWidth: 1
                    Layout.alignment: Qt.AlignTop
                    title: qsTr("By layer")
                    subtitle: qsTr("Each bar is one layer, split by operation")
                    StackedBars {
                        objectName: "layerBars"
                        Layout.fillWidth: true
                        rows: page.report.layers
                        keys: page.report.opNames
                    }
                }
            }
        }
    }
}
