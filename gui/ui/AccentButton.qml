// The one main action of a view: filled with the accent colour.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Button {
    id: button
    property string iconName
    property bool danger: false

    hoverEnabled: true
    implicitHeight: 36
    leftPadding: 16
    rightPadding: 16
    font.pixelSize: Theme.fontBody
    font.weight: Font.DemiBold

    readonly property color fill: danger ? Theme.danger : Theme.accent

    background: Rectangle {
        radius: Theme.radiusSmall
        color: !button.enabled ? Theme.border : button.down ? Qt.darker(button.fill, 1.15)
             : button.hovered ? Qt.lighter(button.fill, 1.08) : button.fill
        border.width: button.visualFocus ? 2 : 0
        border.color: Theme.text
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
                color: button.enabled ? Theme.accentText : Theme.textFaint
            }
            Label {
                anchors.verticalCenter: parent.verticalCenter
                text: button.text
                font: button.font
                color: button.enabled ? Theme.accentText : Theme.textFaint
            }
        }
    }
}
