// The column of pages at the window's left edge.
import QtQuick
import QtQuick.Controls
import Kiln.Ui

Rectangle {
    id: rail
    // [{name, title, icon}]
    property var pages: []
    property int currentIndex: 0
    signal activated(int index)

    implicitWidth: 80
    color: Theme.sidebar

    Column {
        anchors.top: parent.top
        anchors.topMargin: 12
        anchors.horizontalCenter: parent.horizontalCenter
        spacing: 2

        Label {
            anchors.horizontalCenter: parent.horizontalCenter
            text: "Kiln"
            font.pixelSize: 15
            font.weight: Font.Bold
            font.letterSpacing: 0.5
            color: Theme.accent
            bottomPadding: 14
        }
        Repeater {
            model: rail.pages
            NavItem {
                required property var modelData
                required property int index
                objectName: "nav_" + modelData.name
                text: modelData.title
                iconName: modelData.icon
                current: rail.currentIndex === index
                onClicked: rail.activated(index)
            }
        }
    }
    Rectangle {
        anchors.right: parent.right
        width: 1
        height: parent.height
        color: Theme.border
    }
}
