// One Vulkan device: what it is, its memory heaps, what it supports, and whether Kiln uses it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

ColumnLayout {
    id: facts
    property var gpu: ({})
    property bool runsModel: false  // the loaded model runs on this device
    spacing: 8

    function typeName(type) {
        switch (type) {
        case "integrated": return qsTr("integrated GPU")
        case "discrete": return qsTr("discrete GPU")
        case "virtual": return qsTr("virtual GPU")
        case "cpu": return qsTr("software Vulkan (slow, for testing)")
        default: return qsTr("other")
        }
    }

    RowLayout {
        spacing: 10
        Label {
            text: facts.gpu.name
            font.weight: Font.DemiBold
            color: Theme.text
        }
        Rectangle {
            implicitWidth: status.implicitWidth + 14
            implicitHeight: 22
            radius: 11
            color: facts.gpu.usable ? Qt.rgba(Theme.success.r, Theme.success.g, Theme.success.b, 0.15) : Theme.warningSoft
            Label {
                id: status
                anchors.centerIn: parent
                text: facts.runsModel ? qsTr("runs the model") : facts.gpu.usable ? qsTr("usable")
                      : facts.gpu.software ? qsTr("only when chosen") : qsTr("not used")
                font.pixelSize: Theme.fontSmall
                color: facts.gpu.usable ? Theme.success : Theme.warning
            }
        }
    }
    FactGrid {
        Layout.fillWidth: true
        facts: [
            { label: qsTr("Index"), value: String(facts.gpu.index) },
            { label: qsTr("Type"), value: facts.typeName(facts.gpu.type) },
            { label: qsTr("Driver"), value: facts.gpu.driver },
            { label: qsTr("Vulkan"), value: facts.gpu.apiVersion },
            { label: qsTr("Memory heaps"), value: (facts.gpu.heaps || []).map(h => Format.bytes(h.size)
                  + (h.deviceLocal ? " " + qsTr("(device-local)") : "")).join(", ") },
            { label: qsTr("Supports"), value: (facts.gpu.features || []).join(", ") },
            { label: qsTr("Subgroup size"), value: facts.gpu.subgroupSize > 0 ? String(facts.gpu.subgroupSize) : "" },
            { label: qsTr("Largest buffer"), value: facts.gpu.maxStorageBufferRange > 0 ? Format.bytes(facts.gpu.maxStorageBufferRange) : "" },
            { label: facts.gpu.software ? qsTr("Note") : qsTr("Why not used"), value: facts.gpu.usable ? "" : facts.gpu.refusal }
        ]
    }
}
