// An on/off switch in the theme's colours.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Switch {
    id: control
    hoverEnabled: true
    spacing: 10
    font.pixelSize: Theme.fontBody

    indicator: Rectangle {
        x: control.leftPadding
        y: (control.height - height) / 2
        implicitWidth: 40
        implicitHeight: 22
        radius: 11
        color: !control.enabled ? Theme.border : control.checked ? Theme.accent : Theme.surfaceAlt
        border.color: control.checked ? Theme.accent : Theme.border
        Rectangle {
            x: control.checked ? parent.width - width - 3 : 3
            y: 3
            width: 16
            height: 16
            radius: 8
            color: control.checked ? Theme.accentText : (control.enabled ? Theme.textMuted : Theme.textFaint)
            Behavior on x { NumberAnimation { duration: 120 } }
        }
    }
    contentItem: Label {
        leftPadding: control.text.length > 0 ? control.indicator.width + control.spacing : control.indicator.width
        text: control.text
        font: control.font
        color: control.enabled ? Theme.text : Theme.textFaint
        verticalAlignment: Text.AlignVCenter
    }
}
