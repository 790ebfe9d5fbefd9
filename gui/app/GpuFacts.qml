// One Vulkan device: what it is, its memory heaps, what it supports, and whether Kiln uses it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

ColumnLayout {
    id: facts
    property var gpu: ({})
    spacing: 8

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
                text: facts.gpu.usable ? qsTr("usable") : qsTr("not used")
                font.pixelSize: Theme.fontSmall
                color: facts.gpu.usable ? Theme.success : Theme.warning
            }
        }
    }
    FactGrid {
        Layout.fillWidth: true
        facts: [
            { label: qsTr("Index"), value: String(facts.gpu.index) },
            { label: qsTr("Type"), value: facts.gpu.type },
            { label: qsTr("Driver"), value: facts.gpu.driver },
            { label: qsTr("Vulkan"), value: facts.gpu.apiVersion },
            { label: qsTr("Memory heaps"), value: (facts.gpu.heaps || []).map(h => Format.bytes(h.size)
                  + (h.deviceLocal ? " " + qsTr("(device-local)") : "")).join(", ") },
            { label: qsTr("Supports"), value: (facts.gpu.features || []).join(", ") },
            { label: qsTr("Subgroup size"), value: facts.gpu.subgroupSize > 0 ? String(facts.gpu.subgroupSize) : "" },
            { label: qsTr("Largest buffer"), value: facts.gpu.maxStorageBufferRange > 0 ? Format.bytes(facts.gpu.maxStorageBufferRange) : "" },
            { label: qsTr("Why not used"), value: facts.gpu.usable ? "" : facts.gpu.refusal }
        ]
    }
}
