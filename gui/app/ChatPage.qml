// Conversations on the left, the open one on the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Item {
    id: page
    required property ChatController chat
    required property EngineController engine
    signal openModels()

    function focusComposer() { pane.focusComposer() }

    // Ctrl+F: search the conversations (while this page is on screen).
    Shortcut {
        sequence: StandardKey.Find
        onActivated: sidebar.focusSearch()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ConversationSidebar {
            id: sidebar
            chat: page.chat
            Layout.preferredWidth: 272
            Layout.fillHeight: true
            onDeleteRequested: (conversationId, title) => {
                deleteDialog.conversationId = conversationId
                deleteDialog.conversationTitle = title
                deleteDialog.open()
            }
        }
        ChatPane {
            id: pane
            objectName: "chatPane"
            chat: page.chat
            engine: page.engine
            Layout.fillWidth: true
            Layout.fillHeight: true
            onOpenModels: page.openModels()
        }
    }

    Dialog {
        id: deleteDialog
        objectName: "deleteDialog"
        property string conversationId
        property string conversationTitle
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete this conversation?")
        standardButtons: Dialog.Cancel | Dialog.Ok
        Label {
            text: qsTr("“%1” will be removed from this computer.").arg(
                      deleteDialog.conversationTitle.length > 0 ? deleteDialog.conversationTitle : qsTr("New chat"))
            wrapMode: Text.Wrap
            width: 360
        }
        onAccepted: page.chat.remove(conversationId)
    }
}
