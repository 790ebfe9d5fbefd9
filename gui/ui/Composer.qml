// Where the question is typed. Enter sends and Shift+Enter starts a new line, as in most chat
// apps; with ctrlEnterSends (a setting) Ctrl+Enter sends and Enter starts a new line. While an
// answer streams the button stops it. Images come through the attach button or by dropping files
// on it (only while canAttach; otherwise the button says why not) and wait above the text.
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
    property var images: []              // file URLs attached to the next message
    property bool canAttach: false       // the loaded model sees images
    property string attachUnavailableReason
    readonly property string attachTip: canAttach ? qsTr("Attach images (or drop them here)") : attachUnavailableReason
    readonly property bool hasContent: input.text.trim().length > 0 || images.length > 0
    signal sendRequested(string text)
    signal stopRequested()
    signal attachRequested()
    signal filesDropped(var urls)
    signal removeImageRequested(int index)

    function send() {
        if (generating || !ready || !hasContent)
            return
        sendRequested(input.text)
    }
    function clear() { input.clear() }
    function focusInput() { input.forceActiveFocus() }

    implicitHeight: Math.min(Math.max(input.implicitHeight, 44), 200) + 16 + (images.length > 0 ? thumbnails.height + 8 : 0)
    radius: 12
    color: Theme.surface
    border.color: drop.containsDrag ? Theme.accent : input.activeFocus ? Theme.accent : Theme.border

    DropArea {
        id: drop
        anchors.fill: parent
        keys: ["text/uri-list"]
        onEntered: drag => { if (!composer.canAttach) drag.accepted = false }
        onDropped: drop => {
            if (composer.canAttach && drop.hasUrls) {
                composer.filesDropped(drop.urls)
                drop.acceptProposedAction()
            }
        }
    }

    // The images waiting for this message, each with a button that takes it off.
    Row {
        id: thumbnails
        objectName: "pendingImages"
        visible: composer.images.length > 0
        x: 10
        y: 8
        height: 56
        spacing: 6
        Repeater {
            model: composer.images
            Item {
                required property string modelData
                required property int index
                width: 56
                height: 56
                Image {
                    anchors.fill: parent
                    source: parent.modelData
                    fillMode: Image.PreserveAspectCrop
                    sourceSize.width: 112
                    asynchronous: true
                }
                Rectangle {  // keeps the remove button visible on any picture
                    anchors.fill: removeImage
                    radius: width / 2
                    color: Theme.surface
                    opacity: 0.9
                }
                IconButton {
                    id: removeImage
                    anchors.right: parent.right
                    anchors.top: parent.top
                    anchors.margins: 2
                    width: 20
                    height: 20
                    iconName: "close"
                    iconSize: 12
                    tip: qsTr("Remove this image")
                    onClicked: composer.removeImageRequested(parent.index)
                }
            }
        }
    }

    RowLayout {
        anchors.fill: parent
        anchors.margins: 8
        anchors.leftMargin: 6
        anchors.topMargin: composer.images.length > 0 ? thumbnails.height + 16 : 8
        spacing: Theme.gap

        AbstractButton {
            id: attach
            objectName: "attachButton"
            Layout.alignment: Qt.AlignBottom
            implicitWidth: 36
            implicitHeight: 36
            hoverEnabled: true
            // Disabled buttons get no hover: the reason shows through the HoverHandler below.
            enabled: composer.canAttach
            Accessible.name: qsTr("Attach images")
            onClicked: composer.attachRequested()
            HoverHandler { id: attachHover }
            ToolTip.visible: attachHover.hovered
            ToolTip.text: composer.attachTip
            ToolTip.delay: 500
            background: Rectangle {
                radius: 18
                color: attach.enabled && attach.hovered ? Theme.border : "transparent"
            }
            contentItem: Item {
                Icon {
                    anchors.centerIn: parent
                    width: 20
                    height: width
                    name: "image"
                    color: attach.enabled ? Theme.text : Theme.textFaint
                }
            }
        }

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
            enabled: composer.generating || (composer.ready && composer.hasContent)
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
