// A conversation in the side list: title and last words; rename in place, delete from its menu.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

ItemDelegate {
    id: item
    property string title
    property string preview
    property bool current: false
    property bool editing: false
    signal renamed(string title)
    signal deleteRequested()

    function startRename() {
        editing = true
        editor.text = title
        editor.selectAll()
        editor.forceActiveFocus()
    }

    implicitHeight: 58
    hoverEnabled: true
    leftPadding: 20
    rightPadding: 14
    topPadding: 0
    bottomPadding: 0
    Accessible.name: title

    background: Rectangle {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 8
        radius: Theme.radius
        color: item.current ? Theme.surface : item.hovered ? Theme.hover : "transparent"
        border.color: item.current ? Theme.border : "transparent"
    }

    contentItem: RowLayout {
        spacing: 4

        ColumnLayout {
            Layout.fillWidth: true
            spacing: 2
            Label {
                visible: !item.editing
                text: item.title.length > 0 ? item.title : qsTr("New chat")
                elide: Text.ElideRight
                font.pixelSize: Theme.fontBody
                font.weight: item.current ? Font.DemiBold : Font.Medium
                color: Theme.text
                Layout.fillWidth: true
            }
            TextField {
                id: editor
                objectName: "renameField"
                visible: item.editing
                font.pixelSize: Theme.fontBody
                color: Theme.text
                selectByMouse: true
                Layout.fillWidth: true
                background: Rectangle {
                    color: Theme.surface
                    border.color: Theme.accent
                    radius: Theme.radiusSmall
                }
                Keys.onReturnPressed: { item.editing = false; item.renamed(text) }
                Keys.onEnterPressed: { item.editing = false; item.renamed(text) }
                Keys.onEscapePressed: item.editing = false
                onActiveFocusChanged: if (!activeFocus && item.editing) { item.editing = false; item.renamed(text) }
            }
            Label {
                text: item.preview.length > 0 ? item.preview : qsTr("No messages yet")
                elide: Text.ElideRight
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
                Layout.fillWidth: true
            }
        }
        IconButton {
            objectName: "conversationMenuButton"
            visible: item.hovered || item.current || menu.visible
            iconName: "more"
            tip: qsTr("More")
            onClicked: menu.popup(this, 0, height)
        }
    }

    Menu {
        id: menu
        MenuItem {
            text: qsTr("Rename")
            onTriggered: item.startRename()
        }
        MenuItem {
            text: qsTr("Delete")
            onTriggered: item.deleteRequested()
        }
    }
}
