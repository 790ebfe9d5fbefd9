// The conversation's system prompt: instructions the model reads before the first question.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln
import Kiln.Ui

Rectangle {
    id: editor
    required property ChatController chat

    implicitHeight: column.implicitHeight + 24
    radius: Theme.radius
    color: Theme.surface
    border.color: Theme.border

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 12
        spacing: 6
        Label {
            text: qsTr("System prompt for this conversation")
            font.pixelSize: Theme.fontSmall
            font.weight: Font.DemiBold
            color: Theme.textMuted
        }
        TextArea {
            id: input
            objectName: "systemPromptInput"
            Layout.fillWidth: true
            Layout.maximumHeight: 160
            text: editor.chat.systemPrompt
            placeholderText: qsTr("For example: You are a concise assistant. Answer in German.")
            placeholderTextColor: Theme.textFaint
            wrapMode: TextEdit.Wrap
            font.pixelSize: Theme.fontBody
            color: Theme.text
            selectByMouse: true
            background: null
            padding: 0
            // Saved when the field loses focus, not on every key.
            onEditingFinished: editor.chat.systemPrompt = text
        }
    }
}
