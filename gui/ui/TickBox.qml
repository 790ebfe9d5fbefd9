// A compact check box in the app's look: a rounded square that fills with the accent when ticked.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

CheckBox {
    id: box
    padding: 4
    spacing: 0
    // The indicator is all there is: size the box around it (the Basic style counts only the text).
    implicitWidth: leftPadding + indicator.implicitWidth + rightPadding
    implicitHeight: topPadding + indicator.implicitHeight + bottomPadding
    indicator: Rectangle {
        x: box.leftPadding
        y: (box.height - height) / 2
        implicitWidth: 18
        implicitHeight: 18
        radius: 4
        color: box.checked ? (box.enabled ? Theme.accent : Theme.textFaint) : Theme.surface
        border.color: box.checked ? color : box.visualFocus || box.hovered ? Theme.accent : Theme.border
        Icon {
            anchors.centerIn: parent
            visible: box.checked
            width: 14
            height: 14
            name: "check"
            color: Theme.accentText
        }
    }
    contentItem: Item {}
}
