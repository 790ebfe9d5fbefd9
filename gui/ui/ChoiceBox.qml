// A drop-down list of choices, framed like the other fields.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

ComboBox {
    id: box
    implicitWidth: 220
    implicitHeight: 36
    font.pixelSize: Theme.fontBody
    hoverEnabled: true

    background: Rectangle {
        radius: Theme.radiusSmall
        color: box.hovered ? Theme.hover : Theme.surface
        border.color: box.visualFocus || box.popup.visible ? Theme.accent : Theme.border
    }
    contentItem: Label {
        leftPadding: 12
        rightPadding: box.indicator.width + 4
        text: box.displayText
        font: box.font
        color: Theme.text
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    indicator: Icon {
        x: box.width - width - 10
        y: (box.height - height) / 2
        width: 14
        height: 14
        name: "chevron"
        color: Theme.textMuted
    }
}
