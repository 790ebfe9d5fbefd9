// One of a few options, side by side (FP16 | INT8 | INT4). Options can be disabled with a reason.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Rectangle {
    id: choice
    // [{value, label, enabled (default true), tip}]
    property var options: []
    property string value
    signal chosen(string value)

    implicitWidth: row.implicitWidth + 6
    implicitHeight: 36
    radius: Theme.radius
    color: Theme.surfaceAlt
    border.color: Theme.border

    Row {
        id: row
        anchors.centerIn: parent
        spacing: 2
        Repeater {
            model: choice.options
            delegate: AbstractButton {
                id: segment
                required property var modelData
                readonly property bool selected: choice.value === modelData.value
                objectName: "option_" + modelData.value
                text: modelData.label
                enabled: modelData.enabled !== false
                hoverEnabled: true
                implicitHeight: 30
                implicitWidth: Math.max(60, label.implicitWidth + 24)
                Accessible.role: Accessible.RadioButton
                Accessible.checked: selected
                ToolTip.visible: hovered && (modelData.tip || "").length > 0
                ToolTip.text: modelData.tip || ""
                ToolTip.delay: 400
                onClicked: if (!selected) choice.chosen(modelData.value)

                background: Rectangle {
                    radius: Theme.radiusSmall
                    color: segment.selected ? Theme.surface : segment.hovered ? Theme.hover : "transparent"
                    border.color: segment.selected ? Theme.border : "transparent"
                }
                contentItem: Label {
                    id: label
                    text: segment.text
                    horizontalAlignment: Text.AlignHCenter
                    verticalAlignment: Text.AlignVCenter
                    font.pixelSize: Theme.fontBody
                    font.weight: segment.selected ? Font.DemiBold : Font.Normal
                    color: !segment.enabled ? Theme.textFaint : segment.selected ? Theme.accent : Theme.textMuted
                }
            }
        }
    }
}
