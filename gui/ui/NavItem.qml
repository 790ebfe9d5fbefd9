// One page in the navigation rail: icon over a short label, the current one marked.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

AbstractButton {
    id: item
    property string iconName
    property bool current: false

    implicitWidth: 72
    implicitHeight: 60
    hoverEnabled: true
    checkable: false
    Accessible.role: Accessible.PageTab
    Accessible.name: text

    background: Rectangle {
        anchors.fill: parent
        anchors.margins: 4
        radius: Theme.radius
        color: item.current ? Theme.accentSoft : item.hovered || item.visualFocus ? Theme.hover : "transparent"
    }
    contentItem: Column {
        spacing: 3
        topPadding: 6
        Icon {
            anchors.horizontalCenter: parent.horizontalCenter
            width: 22
            height: 22
            name: item.iconName
            color: item.current ? Theme.accent : Theme.textMuted
        }
        Label {
            width: item.width - 8
            anchors.horizontalCenter: parent.horizontalCenter
            horizontalAlignment: Text.AlignHCenter
            text: item.text
            // Long words ("Einstellungen") shrink to fit rather than spill over the rail.
            fontSizeMode: Text.HorizontalFit
            minimumPixelSize: 8
            font.pixelSize: 11
            font.weight: item.current ? Font.DemiBold : Font.Normal
            color: item.current ? Theme.accent : Theme.textMuted
        }
    }
}
