// The list of conversations: new, search, select, rename, delete.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Rectangle {
    id: sidebar
    required property ChatController chat
    signal deleteRequested(string conversationId, string title)
    function focusSearch() {
        search.forceActiveFocus()
        search.selectAll()
    }

    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.topMargin: 16
        spacing: 10

        PlainButton {
            objectName: "newChatButton"
            text: qsTr("New chat")
            iconName: "plus"
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Ctrl+N")
            ToolTip.delay: 600
            onClicked: sidebar.chat.newConversation()
        }
        SearchField {
            id: search
            objectName: "conversationSearch"
            placeholderText: qsTr("Search conversations")
            ToolTip.visible: hovered && text.length === 0
            ToolTip.text: qsTr("Ctrl+F")
            ToolTip.delay: 600
            Keys.onEscapePressed: text = ""
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            onTextChanged: sidebar.chat.conversations.searchText = text
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: sidebar.chat.conversations
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar {}

            delegate: ConversationItem {
                required property var model
                readonly property string conversationId: model.conversationId
                width: ListView.view.width
                title: model.title
                preview: model.preview
                current: conversationId === sidebar.chat.currentId
                onClicked: sidebar.chat.select(conversationId)
                onRenamed: newTitle => sidebar.chat.rename(conversationId, newTitle)
                onDeleteRequested: sidebar.deleteRequested(conversationId, model.title)
            }

            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: qsTr("No conversation matches")
                color: Theme.textFaint
                font.pixelSize: Theme.fontSmall
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
