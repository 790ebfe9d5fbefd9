// A quiet square button showing one icon, with a tooltip saying what it does.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

AbstractButton {
    id: button
    property string iconName
    property string tip
    property color iconColor: Theme.textMuted
    property int iconSize: 18

    implicitWidth: 32
    implicitHeight: 32
    hoverEnabled: true
    focusPolicy: Qt.TabFocus
    Accessible.name: tip

    ToolTip.visible: hovered && tip.length > 0
    ToolTip.text: tip
    ToolTip.delay: 500

    background: Rectangle {
        radius: Theme.radiusSmall
        color: button.down ? Theme.border : button.hovered || button.visualFocus ? Theme.hover : "transparent"
    }
    contentItem: Item {
        Icon {
            anchors.centerIn: parent
            width: button.iconSize
            height: button.iconSize
            name: button.iconName
            color: button.enabled ? (button.hovered ? Theme.text : button.iconColor) : Theme.textFaint
        }
    }
}
