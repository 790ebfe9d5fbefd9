// Where the question is typed. Enter sends and Shift+Enter starts a new line, as in most chat
// apps; with ctrlEnterSends (a setting) Ctrl+Enter sends and Enter starts a new line. While an
// answer streams the button stops it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kiln.Ui

Rectangle {
    id: composer
    property bool generating: false
    property bool ready: true            // a model is loaded
    property alias text: input.text
    property bool ctrlEnterSends: false
    property string placeholder: ctrlEnterSends ? qsTr("Message Gemma… (Ctrl+Enter to send)")
                                                : qsTr("Message Gemma… (Enter to send, Shift+Enter for a new line)")
    signal sendRequested(string text)
    signal stopRequested()

    function send() {
        if (generating || !ready || input.text.trim().length === 0)
            return
        sendRequested(input.text)
    }
    function clear() { input.clear() }
    function focusInput() { input.forceActiveFocus() }

    implicitHeight: Math.min(Math.max(input.implicitHeight, 44), 200) + 16
    radius: 12
    color: Theme.surface
    border.color: input.activeFocus ? Theme.accent : Theme.border

    RowLayout {
        anchors.fill: parent
        anchors.margins: 8
        anchors.leftMargin: 6
        spacing: Theme.gap

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            TextArea {
                id: input
                objectName: "composerInput"
                placeholderText: composer.ready ? composer.placeholder : qsTr("Load a model to start chatting")
                placeholderTextColor: Theme.textFaint
                wrapMode: TextEdit.Wrap
                font.pixelSize: Theme.fontBody
                color: Theme.text
                selectByMouse: true
                selectionColor: Theme.accent
                selectedTextColor: Theme.accentText
                background: null
                Keys.onPressed: event => {
                    if (event.key !== Qt.Key_Return && event.key !== Qt.Key_Enter)
                        return
                    const ctrl = (event.modifiers & Qt.ControlModifier) !== 0
                    const plain = (event.modifiers & (Qt.ShiftModifier | Qt.ControlModifier | Qt.AltModifier)) === 0
                    if (ctrl || (plain && !composer.ctrlEnterSends)) {
                        event.accepted = true
                        composer.send()
                    }
                }
            }
        }
        AbstractButton {
            id: action
            objectName: composer.generating ? "stopButton" : "sendButton"
            Layout.alignment: Qt.AlignBottom
            implicitWidth: 36
            implicitHeight: 36
            hoverEnabled: true
            enabled: composer.generating || (composer.ready && input.text.trim().length > 0)
            Accessible.name: composer.generating ? qsTr("Stop") : qsTr("Send")
            ToolTip.visible: hovered
            ToolTip.text: composer.generating ? qsTr("Stop (Esc)") : (composer.ctrlEnterSends ? qsTr("Send (Ctrl+Enter)") : qsTr("Send (Enter)"))
            ToolTip.delay: 500
            onClicked: composer.generating ? composer.stopRequested() : composer.send()
            background: Rectangle {
                radius: 18
                color: !action.enabled ? Theme.border : composer.generating ? Theme.text
                     : action.hovered ? Theme.accentHover : Theme.accent
            }
            contentItem: Item {
                Icon {
                    anchors.centerIn: parent
                    width: composer.generating ? 14 : 18
                    height: width
                    name: composer.generating ? "stop" : "send"
                    strokeWidth: 2.2
                    color: composer.generating ? Theme.surface : Theme.accentText
                }
            }
        }
    }
}
