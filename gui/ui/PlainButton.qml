// A secondary action: outlined, quiet.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Button {
    id: button
    property string iconName
    property bool danger: false

    hoverEnabled: true
    implicitHeight: 36
    leftPadding: 14
    rightPadding: 14
    font.pixelSize: Theme.fontBody

    readonly property color ink: danger ? Theme.danger : Theme.text

    background: Rectangle {
        radius: Theme.radiusSmall
        color: button.down ? Theme.border : button.hovered ? Theme.hover : Theme.surface
        border.width: button.visualFocus ? 2 : 1
        border.color: button.visualFocus ? Theme.accent : Theme.border
    }
    contentItem: Item {
        implicitWidth: row.implicitWidth
        implicitHeight: row.implicitHeight
        Row {
            id: row
            anchors.centerIn: parent
            spacing: 6
            Icon {
                visible: button.iconName.length > 0
                anchors.verticalCenter: parent.verticalCenter
                width: 16
                height: 16
                name: button.iconName
                color: button.enabled ? button.ink : Theme.textFaint
            }
            Label {
                anchors.verticalCenter: parent.verticalCenter
                text: button.text
                font: button.font
                color: button.enabled ? button.ink : Theme.textFaint
            }
        }
    }
}
