// What the machine has (CPU, memory, Vulkan devices, NPU) and live plots while answering.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property HardwareMonitor monitor
    required property EngineController engine
    readonly property var info: monitor.info
    readonly property var npu: info.npu || ({})

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
                PageHeader {
                    Layout.fillWidth: true
                    title: qsTr("Hardware")
                    subtitle: qsTr("What this computer offers the engine, and what it does while answering.")
                }
                PlainButton {
                    text: qsTr("Probe again")
                    iconName: "regenerate"
                    onClicked: page.monitor.refresh()
                }
            }

            // Which device answers: the first thing people look for on this page.
            Card {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("Running the model now")
                Label {
                    objectName: "runningOn"
                    text: page.engine.modelLoaded
                          ? qsTr("%1 runs on: %2").arg(page.engine.modelInfo.name).arg(page.engine.modelInfo.runsOn)
                          : page.engine.loading ? qsTr("A model is being loaded…")
                          : qsTr("No model is loaded.")
                    color: page.engine.modelInfo.softwareVulkan === true ? Theme.warning : Theme.text
                    font.weight: Font.DemiBold
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Label {
                    visible: page.engine.modelLoaded && page.engine.modelInfo.softwareVulkan === true
                    text: qsTr("This Vulkan device is the CPU pretending to be a GPU: choose Automatic or CPU in Settings for answers many times faster.")
                    color: Theme.textMuted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }

            // Live plots.
            Card {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                title: qsTr("While generating")
                subtitle: page.engine.generating ? qsTr("Live: the answer being written now")
                          : qsTr("The last answer; the plots move while the next one is written")
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 28
                    LineChart {
                        objectName: "tokensPerSecondChart"
                        Layout.fillWidth: true
                        title: qsTr("Tokens per second")
                        unit: qsTr("tok/s")
                        xLabel: qsTr("s")
                        points: page.monitor.tokensPerSecond
                        color: Theme.seriesColor(0)
                    }
                    LineChart {
                        Layout.fillWidth: true
                        title: qsTr("Memory in use")
                        unit: qsTr("MiB")
                        decimals: 0
                        minimumMax: 100
                        xLabel: qsTr("s")
                        points: page.monitor.memoryMiB
                        color: Theme.seriesColor(1)
                    }
                    LineChart {
                        Layout.fillWidth: true
                        title: qsTr("GPU busy")
                        unit: "%"
                        decimals: 0
                        minimumMax: 100
                        xLabel: qsTr("s")
                        points: page.monitor.gpuBusy
                        color: Theme.seriesColor(2)
                        emptyText: page.monitor.gpuBusySource.length > 0 ? qsTr("No data yet")
                                   : qsTr("This GPU's driver does not report it")
                    }
                }
            }

            GridLayout {
                Layout.fillWidth: true
                Layout.leftMargin: Theme.pagePadding
                Layout.rightMargin: Theme.pagePadding
                Layout.bottomMargin: Theme.pagePadding
                columns: width > 900 ? 2 : 1
                columnSpacing: 20
                rowSpacing: 20

                Card {
                    title: qsTr("Processor and memory")
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    FactGrid {
                        Layout.fillWidth: true
                        facts: page.monitor.probed ? [
                            { label: qsTr("CPU"), value: page.info.cpuModel },
                            { label: qsTr("Cores"), value: qsTr("%1 logical").arg(page.info.cpuCores) },
                            { label: qsTr("Memory"), value: qsTr("%1 total, %2 available")
                                  .arg(Format.bytes(page.info.ramTotal)).arg(Format.bytes(page.info.ramAvailable)) }
                        ] : [{ label: qsTr("Status"), value: qsTr("Probing…") }]
                    }
                }

                Card {
                    title: qsTr("NPU")
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    FactGrid {
                        Layout.fillWidth: true
                        facts: page.npu.present ? [
                            { label: qsTr("Present"), value: qsTr("Yes") },
                            { label: qsTr("Generation"), value: page.npu.generation },
                            { label: qsTr("Device"), value: page.npu.devicePath },
                            { label: qsTr("XRT"), value: page.npu.xrtVersion }
                        ] : [
                            { label: qsTr("Present"), value: page.monitor.probed ? qsTr("No") : qsTr("Probing…") },
                            { label: qsTr("Why not"), value: page.npu.reason || "" },
                            { label: qsTr("XRT"), value: page.npu.xrtVersion || "" }
                        ]
                    }
                }

                Card {
                    title: qsTr("Graphics (Vulkan)")
                    subtitle: page.info.vulkanStatus || ""
                    Layout.fillWidth: true
                    Layout.columnSpan: parent.columns
                    Label {
                        visible: page.monitor.probed && (page.info.gpus || []).length === 0
                        text: qsTr("No Vulkan device: the engine runs on the CPU.")
                        color: Theme.textMuted
                    }
                    Repeater {
                        model: page.info.gpus || []
                        delegate: GpuFacts {
                            required property var modelData
                            Layout.fillWidth: true
                            gpu: modelData
                            // The backend's name carries the device's: "vulkan (NAME)".
                            runsModel: page.engine.modelLoaded
                                       && String(page.engine.modelInfo.backend).startsWith("vulkan (" + modelData.name)
                        }
                    }
                }
            }
        }
    }
}
