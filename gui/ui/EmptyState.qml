// What a view shows when it has nothing yet: an icon, a line, and the way forward.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Item {
    id: empty
    property string iconName: "info"
    property string title
    property string text
    property string actionText
    signal actionTriggered()

    implicitWidth: 420
    implicitHeight: column.implicitHeight
    width: parent ? Math.min(parent.width - 48, implicitWidth) : implicitWidth

    Column {
        id: column
        width: empty.width
        spacing: 10

        Rectangle {
            anchors.horizontalCenter: parent.horizontalCenter
            width: 56
            height: 56
            radius: 28
            color: Theme.accentSoft
            Icon {
                anchors.centerIn: parent
                width: 26
                height: 26
                name: empty.iconName
                color: Theme.accent
            }
        }
        Label {
            width: parent.width
            horizontalAlignment: Text.AlignHCenter
            text: empty.title
            font.pixelSize: Theme.fontTitle
            font.weight: Font.DemiBold
            color: Theme.text
            wrapMode: Text.Wrap
        }
        Label {
            width: parent.width
            horizontalAlignment: Text.AlignHCenter
            visible: text.length > 0
            text: empty.text
            font.pixelSize: Theme.fontBody
            color: Theme.textMuted
            wrapMode: Text.Wrap
        }
        AccentButton {
            anchors.horizontalCenter: parent.horizontalCenter
            visible: empty.actionText.length > 0
            text: empty.actionText
            onClicked: empty.actionTriggered()
        }
    }
}
