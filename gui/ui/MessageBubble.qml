// One message. The user's sit right in a tinted bubble; answers run full width as Markdown with
// code blocks, their numbers underneath, and copy / edit / regenerate at hand.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

Item {
    id: message
    property string role: "assistant"
    property string text
    property bool streaming: false
    property bool hasStats: false
    property int generatedTokens: 0
    property real timeToFirstTokenMs: 0
    property real tokensPerSecond: 0
    property string stopReason
    property var notes: []               // the engine's notes on this answer (strings)
    property string error
    property bool canRegenerate: false   // the last answer, and nothing running
    property bool canEdit: false
    property bool editing: false
    property int variant: 1              // which version of this message is shown (1-based)
    property int variantCount: 1         // how many there are: a regenerate or an edit adds one
    property bool canSwitchVariant: true
    property int rolledOff: 0            // earlier messages this answer's model no longer saw
    property var images: []              // the user's attached images: file URLs, shown as thumbnails
    property var imageNames: []

    signal editSubmitted(string text)
    signal regenerateRequested()
    signal variantRequested(int variant)

    readonly property bool isUser: role === "user"
    readonly property var blocks: isUser ? [] : MarkdownBlocks.split(text)

    function startEdit() {
        editor.text = text
        editing = true
        editor.forceActiveFocus()
        editor.cursorPosition = editor.length
    }

    implicitHeight: column.implicitHeight
    width: parent ? parent.width : 600

    ColumnLayout {
        id: column
        width: parent.width
        spacing: 6

        // The user's images, above their words.
        Flow {
            objectName: "messageImages"
            visible: message.isUser && message.images.length > 0
            Layout.alignment: Qt.AlignRight
            Layout.maximumWidth: message.width * 0.8
            spacing: 6
            Repeater {
                model: message.images
                Image {
                    required property string modelData
                    required property int index
                    source: modelData
                    width: 120
                    height: 120
                    fillMode: Image.PreserveAspectCrop
                    sourceSize.width: 240
                    asynchronous: true
                    Accessible.name: message.imageNames[index] || ""
                    ToolTip.visible: thumbArea.containsMouse
                    ToolTip.text: message.imageNames[index] || ""
                    MouseArea { id: thumbArea; anchors.fill: parent; hoverEnabled: true }
                }
            }
        }

        // The user's message.
        Rectangle {
            objectName: "userBubble"
            visible: message.isUser && !message.editing && (message.text.length > 0 || message.images.length === 0)
            Layout.alignment: Qt.AlignRight
            Layout.maximumWidth: message.width * 0.8
            implicitWidth: userText.implicitWidth
            implicitHeight: userText.implicitHeight
            radius: 14
            color: Theme.userBubble
            TextEdit {
                id: userText
                objectName: "userText"
                width: Math.min(implicitWidth, message.width * 0.8)
                padding: 12
                leftPadding: 16
                rightPadding: 16
                text: message.isUser ? message.text : ""
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                textFormat: TextEdit.PlainText
                font.pixelSize: Theme.fontBody
                color: Theme.text
                selectionColor: Theme.accent
                selectedTextColor: Theme.accentText
            }
        }

        // Editing a question before sending it again.
        ColumnLayout {
            visible: message.editing
            Layout.fillWidth: true
            spacing: Theme.gap
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: Math.min(editor.implicitHeight, 240)
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.accent
                ScrollView {
                    anchors.fill: parent
                    TextArea {
                        id: editor
                        objectName: "editField"
                        wrapMode: TextEdit.Wrap
                        font.pixelSize: Theme.fontBody
                        color: Theme.text
                        selectByMouse: true
                        background: null
                        Keys.onPressed: event => {
                            if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && (event.modifiers & Qt.ControlModifier)) {
                                event.accepted = true
                                saveButton.clicked()
                            } else if (event.key === Qt.Key_Escape) {
                                event.accepted = true
                                message.editing = false
                            }
                        }
                    }
                }
            }
            RowLayout {
                Layout.alignment: Qt.AlignRight
                spacing: Theme.gap
                PlainButton {
                    text: qsTr("Cancel")
                    onClicked: message.editing = false
                }
                AccentButton {
                    id: saveButton
                    objectName: "saveEditButton"
                    text: qsTr("Send again")
                    enabled: editor.text.trim().length > 0
                    onClicked: {
                        message.editing = false
                        message.editSubmitted(editor.text)
                    }
                }
            }
        }

        // The answer: prose and code blocks.
        Repeater {
            model: message.blocks
            delegate: Loader {
                required property var modelData
                Layout.fillWidth: true
                sourceComponent: modelData.kind === "code" ? codeComponent
                               : modelData.kind === "quote" ? quoteComponent
                               : modelData.kind === "table" ? tableComponent : proseComponent
                property var block: modelData
            }
        }
        Component {
            id: proseComponent
            TextEdit {
                objectName: "answerText"
                text: parent ? parent.block.text : ""
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                textFormat: TextEdit.MarkdownText
                font.pixelSize: Theme.fontBody
                color: Theme.text
                selectionColor: Theme.accent
                selectedTextColor: Theme.accentText
                onLinkActivated: link => Qt.openUrlExternally(link)
            }
        }
        Component {
            id: quoteComponent
            // A quote: a quiet bar beside it, the text a shade softer.
            Item {
                implicitHeight: quoteText.implicitHeight + 4
                Rectangle {
                    width: 3
                    height: parent.height
                    radius: 1.5
                    color: Theme.accent
                    opacity: 0.6
                }
                TextEdit {
                    id: quoteText
                    objectName: "quoteText"
                    x: 14
                    y: 2
                    width: parent.width - x
                    text: parent.parent ? parent.parent.block.text : ""
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.Wrap
                    textFormat: TextEdit.MarkdownText
                    font.pixelSize: Theme.fontBody
                    font.italic: true
                    color: Theme.textMuted
                    selectionColor: Theme.accent
                    selectedTextColor: Theme.accentText
                    onLinkActivated: link => Qt.openUrlExternally(link)
                }
            }
        }
        Component {
            id: tableComponent
            MarkdownTable {
                rows: parent ? parent.block.rows : []
            }
        }
        Component {
            id: codeComponent
            CodeBlock {
                code: parent ? parent.block.text : ""
                language: parent ? parent.block.language : ""
            }
        }

        // Still thinking: nothing has arrived yet.
        Row {
            visible: !message.isUser && message.streaming && message.text.length === 0
            spacing: 5
            Layout.topMargin: 4
            Repeater {
                model: 3
                Rectangle {
                    required property int index
                    width: 7
                    height: 7
                    radius: 3.5
                    color: Theme.textFaint
                    SequentialAnimation on opacity {
                        running: message.streaming
                        loops: Animation.Infinite
                        PauseAnimation { duration: index * 150 }
                        NumberAnimation { from: 0.3; to: 1; duration: 350 }
                        NumberAnimation { from: 1; to: 0.3; duration: 350 }
                        PauseAnimation { duration: (2 - index) * 150 }
                    }
                }
            }
        }

        Label {
            visible: message.error.length > 0
            text: message.error
            color: Theme.danger
            wrapMode: Text.Wrap
            font.pixelSize: Theme.fontSmall
            Layout.fillWidth: true
        }

        // Numbers and actions.
        RowLayout {
            visible: !message.editing && !message.streaming
            Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
            spacing: 2
            // ‹ 2/3 ›: the other versions of this message, as a regenerate or an edit left them.
            IconButton {
                objectName: "previousVariantButton"
                visible: message.variantCount > 1
                enabled: message.canSwitchVariant && message.variant > 1
                iconName: "previous"
                iconSize: 14
                width: 24
                height: 28
                tip: qsTr("Previous version")
                onClicked: message.variantRequested(message.variant - 1)
            }
            Label {
                objectName: "variantLabel"
                visible: message.variantCount > 1
                text: qsTr("%1/%2").arg(message.variant).arg(message.variantCount)
                font.pixelSize: Theme.fontSmall
                color: Theme.textMuted
            }
            IconButton {
                objectName: "nextVariantButton"
                visible: message.variantCount > 1
                enabled: message.canSwitchVariant && message.variant < message.variantCount
                iconName: "next"
                iconSize: 14
                width: 24
                height: 28
                tip: qsTr("Next version")
                onClicked: message.variantRequested(message.variant + 1)
            }
            StatsLine {
                id: statsLine
                objectName: "statsLine"
                visible: message.hasStats && !message.isUser && text.length > 0
                tokens: message.generatedTokens
                timeToFirstTokenMs: message.timeToFirstTokenMs
                tokensPerSecond: message.tokensPerSecond
                stopReason: message.stopReason
                rightPadding: 6
            }
            IconButton {
                objectName: "copyMessageButton"
                iconName: copiedTimer.running ? "check" : "copy"
                iconSize: 15
                width: 28
                height: 28
                tip: qsTr("Copy")
                onClicked: {
                    Clipboard.copy(message.text)
                    copiedTimer.restart()
                }
                Timer { id: copiedTimer; interval: 1500 }
            }
            IconButton {
                objectName: "editButton"
                visible: message.isUser && message.canEdit
                iconName: "edit"
                iconSize: 15
                width: 28
                height: 28
                tip: qsTr("Edit and send again")
                onClicked: message.startEdit()
            }
            IconButton {
                objectName: "regenerateButton"
                visible: !message.isUser && message.canRegenerate
                iconName: "regenerate"
                iconSize: 15
                width: 28
                height: 28
                tip: qsTr("Regenerate")
                onClicked: message.regenerateRequested()
            }
        }
        // A long conversation: the oldest turns rolled off the context for this answer.
        Label {
            objectName: "rolledOffNote"
            visible: !message.isUser && !message.streaming && message.rolledOff > 0
            text: qsTr("The conversation is longer than the model's context: it no longer saw the first %n message(s).", "", message.rolledOff)
            color: Theme.textFaint
            wrapMode: Text.Wrap
            font.pixelSize: Theme.fontSmall
            Layout.fillWidth: true
        }
        // What the engine changed on the way (a fallback, say), under the numbers.
        Label {
            objectName: "notesLine"
            visible: message.hasStats && !message.isUser && !message.streaming && (message.notes || []).length > 0
            text: (message.notes || []).join("\n")
            color: Theme.warning
            wrapMode: Text.Wrap
            font.pixelSize: Theme.fontSmall
            Layout.fillWidth: true
        }
    }
}
